// Galleries: the list in the sidebar (create, open), one gallery's items in their order (rename,
// reorder by drag and drop or Alt+arrow keys, remove), and adding a photo from the preview.
import { call, find, pointer } from "./api.js";

export class Galleries {
  constructor({ list, view, onError, onShowPhoto }) {
    this.list = list;
    this.view = view;
    this.onError = onError;
    this.onShowPhoto = onShowPhoto;
    this.galleries = [];
  }

  /** Reloads the sidebar list. */
  async refresh() {
    this.galleries = (await find("Gallery", { order: "name", limit: 1000 })).results;
    this.list.replaceChildren(...this.galleries.map((g) => {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = `#gallery/${g.objectId}`;
      link.textContent = `${g.name} (${g.photoCount ?? 0})`;
      link.dataset.id = g.objectId;
      item.appendChild(link);
      return item;
    }));
  }

  /** Creates a gallery and returns its id. */
  async create(name) {
    const created = await call("POST", "/classes/Gallery", { name });
    await this.refresh();
    return created.objectId;
  }

  /** Adds a photo at the end of a gallery. */
  async add(galleryId, photoId) {
    await call("POST", "/classes/GalleryItem", { gallery: pointer("Gallery", galleryId), photo: pointer("Photo", photoId) });
    await this.refresh();
  }

  /** Shows one gallery: its name (renamable), its items in order. */
  async show(galleryId) {
    const gallery = await call("GET", `/classes/Gallery/${galleryId}`);
    const items = (await find("GalleryItem", {
      where: { gallery: pointer("Gallery", galleryId) }, order: "position", include: "photo", limit: 1000,
    })).results.filter((item) => item.photo && item.photo.objectId);
    const header = document.createElement("div");
    header.className = "gallery-header";
    const name = document.createElement("input");
    name.value = gallery.name;
    name.className = "gallery-name";
    name.setAttribute("aria-label", "Gallery name");
    const rename = button("Rename", async () => {
      await call("PUT", `/classes/Gallery/${galleryId}`, { name: name.value.trim() || gallery.name });
      await this.refresh();
    });
    const trash = button("Move gallery to Recently Deleted", async () => {
      await call("DELETE", `/classes/Gallery/${galleryId}`);
      await this.refresh();
      location.hash = "#trash";
    });
    header.append(name, rename, trash);
    const hint = document.createElement("p");
    hint.className = "hint";
    hint.textContent = items.length
      ? "Drag photos to reorder them, or focus one and press Alt+← / Alt+→."
      : "No photos yet: open a photo and choose “Add to gallery”.";
    const strip = document.createElement("ol");
    strip.className = "gallery-items";
    strip.setAttribute("aria-label", `Photos of ${gallery.name}`);
    for (const item of items) strip.appendChild(this.itemElement(item, strip, galleryId));
    this.view.replaceChildren(header, hint, strip);
    this.view.dataset.gallery = galleryId;
  }

  itemElement(item, strip, galleryId) {
    const photo = item.photo;
    const li = document.createElement("li");
    li.className = "gallery-item";
    li.tabIndex = 0;
    li.draggable = true;
    li.dataset.item = item.objectId;
    li.dataset.id = photo.objectId;
    li.style.background = photo.dominantColor || "#ccc";
    li.style.width = `${Math.round(160 * (photo.aspectRatio || 1))}px`;
    const title = photo.title || "Untitled photo";
    li.setAttribute("aria-label", title);
    if (photo.thumbnail && photo.thumbnail.url) {
      const img = document.createElement("img");
      img.src = photo.thumbnail.url;
      img.alt = title;
      li.appendChild(img);
    }
    const move = async (to) => {
      const count = strip.children.length;
      if (to < 0 || to >= count) return;
      const from = [...strip.children].indexOf(li);
      if (from === to) return;
      strip.insertBefore(li, strip.children[to > from ? to + 1 : to] || null);
      li.focus();
      try {
        await call("PUT", `/classes/GalleryItem/${item.objectId}`, { position: to });
      } catch (error) {
        this.onError(error);
      }
      await this.show(galleryId);
      strip.ownerDocument.querySelector(`.gallery-item[data-item="${item.objectId}"]`)?.focus();
    };
    li.addEventListener("keydown", (e) => {
      const index = [...strip.children].indexOf(li);
      if (e.altKey && e.key === "ArrowLeft") { e.preventDefault(); move(index - 1); }
      else if (e.altKey && e.key === "ArrowRight") { e.preventDefault(); move(index + 1); }
      else if (e.key === "ArrowLeft") li.previousElementSibling?.focus();
      else if (e.key === "ArrowRight") li.nextElementSibling?.focus();
      else if (e.key === "Enter") this.onShowPhoto(photo);
    });
    li.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/x-gallery-item", item.objectId); li.classList.add("dragging"); });
    li.addEventListener("dragend", () => li.classList.remove("dragging"));
    li.addEventListener("dragover", (e) => { if (e.dataTransfer.types.includes("text/x-gallery-item")) e.preventDefault(); });
    li.addEventListener("drop", (e) => {
      const dragged = e.dataTransfer.getData("text/x-gallery-item");
      if (!dragged) return;
      e.preventDefault();
      e.stopPropagation();
      const source = strip.querySelector(`[data-item="${dragged}"]`);
      const to = [...strip.children].indexOf(li);
      if (source && source !== li) source.dispatchEvent(new CustomEvent("move-to", { detail: to }));
    });
    li.addEventListener("move-to", (e) => move(e.detail));
    return li;
  }
}

/** A button with a label and an action. */
export function button(label, action) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", action);
  return b;
}
