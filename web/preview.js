// The full-screen preview: the preview image over the dominant colour, previous and next with the
// arrow keys, buttons or a horizontal swipe, Esc (or the close button) to leave; focus returns to the tile.
export class Preview {
  constructor(dialog, { photos, actions }) {
    this.dialog = dialog;
    this.photos = photos; // () => the current list
    this.actions = actions; // (photo, container) => fills the action bar
    this.image = dialog.querySelector("img");
    this.caption = dialog.querySelector(".caption");
    this.bar = dialog.querySelector(".actions");
    dialog.querySelector(".close").addEventListener("click", () => this.close());
    dialog.querySelector(".prev").addEventListener("click", () => this.step(-1));
    dialog.querySelector(".next").addEventListener("click", () => this.step(1));
    dialog.addEventListener("keydown", (e) => {
      if (e.target.closest("select, input")) return;
      if (e.key === "ArrowLeft") { e.preventDefault(); this.step(-1); }
      if (e.key === "ArrowRight") { e.preventDefault(); this.step(1); }
    });
    dialog.addEventListener("close", () => {
      document.querySelector(`.tile[data-id="${this.current}"]`)?.focus();
      this.current = null;
    });
    let start = null;
    dialog.addEventListener("pointerdown", (e) => { start = { x: e.clientX, y: e.clientY }; });
    dialog.addEventListener("pointerup", (e) => {
      if (!start) return;
      const dx = e.clientX - start.x, dy = e.clientY - start.y;
      start = null;
      if (Math.abs(dx) > 50 && Math.abs(dx) > 2 * Math.abs(dy)) this.step(dx < 0 ? 1 : -1);
    });
  }

  /** Opens the photo with that id. */
  open(objectId) {
    const photo = this.photos().find((p) => p.objectId === objectId);
    if (!photo) return;
    this.current = objectId;
    const title = photo.title || "Untitled photo";
    this.dialog.style.setProperty("--placeholder", photo.dominantColor || "#222");
    this.image.removeAttribute("src");
    if (photo.preview && photo.preview.url) this.image.src = photo.preview.url;
    this.image.alt = title;
    this.caption.textContent = photo.status === "ready" ? title : `${title} (${photo.status})`;
    this.dialog.dataset.id = objectId;
    this.bar.replaceChildren();
    this.actions(photo, this.bar);
    if (!this.dialog.open) this.dialog.showModal();
    this.dialog.querySelector(".close").focus();
  }

  /** The previous (-1) or next (1) photo. */
  step(delta) {
    const list = this.photos();
    const index = list.findIndex((p) => p.objectId === this.current);
    const next = list[index + delta];
    if (next) this.open(next.objectId);
  }

  close() { if (this.dialog.open) this.dialog.close(); }
}
