// ThumbHash placeholders (evanw/thumbhash's format): the record's `thumbhash` (base64, ~25 bytes)
// decoded into a small blurred image, painted behind a tile before any image byte arrives.

/** The placeholder of a base64 ThumbHash as a PNG data URL, or null for a missing or short hash. */
export function thumbHashDataURL(base64) {
  if (!base64) return null;
  const hash = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const image = decode(hash);
  if (!image) return null;
  const canvas = document.createElement("canvas");
  canvas.width = image.w;
  canvas.height = image.h;
  const context = canvas.getContext("2d");
  const data = context.createImageData(image.w, image.h);
  data.data.set(image.rgba);
  context.putImageData(data, 0, 0);
  return canvas.toDataURL();
}

/** The hash's RGBA pixels (at most 32×32), as galleryd's `ThumbHash.decode` makes them. */
function decode(hash) {
  if (hash.length < 5) return null;
  const header24 = hash[0] | (hash[1] << 8) | (hash[2] << 16);
  const header16 = hash[3] | (hash[4] << 8);
  const hasAlpha = (header24 >> 23) !== 0;
  if (hasAlpha && hash.length < 6) return null;
  const landscape = (header16 >> 15) !== 0;
  const lMax = hasAlpha ? 5 : 7;
  const lx = Math.max(3, landscape ? lMax : header16 & 7);
  const ly = Math.max(3, landscape ? header16 & 7 : lMax);
  const dc = {
    l: (header24 & 63) / 63, p: ((header24 >> 6) & 63) / 31.5 - 1, q: ((header24 >> 12) & 63) / 31.5 - 1,
    a: hasAlpha ? (hash[5] & 15) / 15 : 1,
  };
  const scale = {
    l: ((header24 >> 18) & 31) / 31, p: (((header16 >> 3) & 63) / 63) * 1.25, q: (((header16 >> 9) & 63) / 63) * 1.25,
    a: hasAlpha ? (hash[5] >> 4) / 15 : 1,
  };
  const start = hasAlpha ? 6 : 5;
  let index = 0;
  const terms = (nx, ny, s) => {
    const ac = [];
    for (let cy = 0; cy < ny; cy++) {
      for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++, index++) {
        const byte = hash[start + (index >> 1)];
        if (byte === undefined) return null;
        ac.push((((byte >> ((index & 1) << 2)) & 15) / 7.5 - 1) * s);
      }
    }
    return ac;
  };
  const ac = { l: terms(lx, ly, scale.l), p: terms(3, 3, scale.p), q: terms(3, 3, scale.q), a: hasAlpha ? terms(5, 5, scale.a) : [] };
  if (!ac.l || !ac.p || !ac.q || !ac.a) return null;
  const ratio = (landscape ? lMax : header16 & 7) / (landscape ? header16 & 7 : lMax);
  const w = Math.round(ratio > 1 ? 32 : 32 * ratio), h = Math.round(ratio > 1 ? 32 / ratio : 32);
  const rgba = new Uint8ClampedArray(w * h * 4);
  const sum = (terms, nx, ny, fx, fy) => {
    let total = 0;
    for (let cy = 0, j = 0; cy < ny; cy++) {
      for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++, j++) total += terms[j] * fx[cx] * fy[cy] * 2;
    }
    return total;
  };
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i += 4) {
      const fx = [], fy = [];
      for (let c = 0; c < 7; c++) {
        fx[c] = Math.cos((Math.PI / w) * (x + 0.5) * c);
        fy[c] = Math.cos((Math.PI / h) * (y + 0.5) * c);
      }
      const l = dc.l + sum(ac.l, lx, ly, fx, fy);
      const p = dc.p + sum(ac.p, 3, 3, fx, fy);
      const q = dc.q + sum(ac.q, 3, 3, fx, fy);
      const a = dc.a + (hasAlpha ? sum(ac.a, 5, 5, fx, fy) : 0);
      const b = l - (2 / 3) * p, r = (3 * l - b + q) / 2, g = r - q;
      rgba[i] = 255 * r;
      rgba[i + 1] = 255 * g;
      rgba[i + 2] = 255 * b;
      rgba[i + 3] = 255 * a;
    }
  }
  return { w, h, rgba };
}
