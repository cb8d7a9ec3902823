// Upload: drop files anywhere on the page (or pick them with the button); each file gets a row
// with its own progress bar, and becomes a pending photo in the grid as soon as it is stored.
import { upload } from "./api.js";

export function setUpUploads({ input, dropTarget, list, onCreated }) {
  const send = (files) => {
    for (const file of files) {
      // A first sieve only (browsers often leave HEIC's type empty): the server judges the bytes.
      if (!/^image\/(jpeg|png|webp|heic|heif|avif)$/.test(file.type) && !/\.(jpe?g|png|webp|heic|heif|avif)$/i.test(file.name)) {
        addRow(file.name).fail("Only JPEG, PNG, WebP, HEIC and AVIF photos can be uploaded.");
        continue;
      }
      const row = addRow(file.name);
      upload(file, row.progress).then((created) => {
        row.done();
        onCreated(created.objectId);
      }, (error) => row.fail(error.message));
    }
  };
  function addRow(name) {
    const item = document.createElement("li");
    const label = document.createElement("span");
    label.textContent = name;
    const bar = document.createElement("progress");
    bar.max = 1;
    bar.value = 0;
    bar.setAttribute("aria-label", `Uploading ${name}`);
    item.append(label, bar);
    list.appendChild(item);
    list.hidden = false;
    return {
      progress: (fraction) => { bar.value = fraction; },
      done: () => { item.classList.add("done"); setTimeout(() => { item.remove(); list.hidden = !list.children.length; }, 4000); },
      fail: (message) => { item.classList.add("failed"); label.textContent = `${name}: ${message}`; },
    };
  }
  input.addEventListener("change", () => { send([...input.files]); input.value = ""; });
  let depth = 0;
  dropTarget.addEventListener("dragenter", (e) => {
    if (![...e.dataTransfer.types].includes("Files")) return;
    depth += 1; dropTarget.classList.add("dropping");
  });
  dropTarget.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) dropTarget.classList.remove("dropping"); });
  dropTarget.addEventListener("dragover", (e) => { if ([...e.dataTransfer.types].includes("Files")) e.preventDefault(); });
  dropTarget.addEventListener("drop", (e) => {
    if (!e.dataTransfer.files.length) return;
    e.preventDefault();
    depth = 0; dropTarget.classList.remove("dropping");
    send([...e.dataTransfer.files]);
  });
}
