// Writes icon.png (512×512, RGBA): a page with a checklist on a blue tile, for the MCP Bundle.
// Re-run only to change the icon: node scripts/icon.mjs
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 512;
const px = Buffer.alloc(SIZE * SIZE * 4);
const set = (x, y, [r, g, b, a = 255]) => {
  const i = (y * SIZE + x) * 4;
  px[i] = r;
  px[i + 1] = g;
  px[i + 2] = b;
  px[i + 3] = a;
};
const rect = (x0, y0, x1, y1, color, radius = 0) => {
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const dx = Math.max(x0 + radius - x, 0, x - (x1 - 1 - radius));
      const dy = Math.max(y0 + radius - y, 0, y - (y1 - 1 - radius));
      if (dx * dx + dy * dy <= radius * radius) set(x, y, color);
    }
  }
};
const line = (x0, y0, x1, y1, width, color) => {
  const steps = Math.ceil(Math.hypot(x1 - x0, y1 - y0));
  for (let s = 0; s <= steps; s++) {
    const cx = x0 + ((x1 - x0) * s) / steps;
    const cy = y0 + ((y1 - y0) * s) / steps;
    for (let y = Math.floor(cy - width); y <= cy + width; y++)
      for (let x = Math.floor(cx - width); x <= cx + width; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= width * width) set(x, y, color);
  }
};

const BLUE = [37, 84, 140];
const PAGE = [250, 250, 247];
const INK = [150, 164, 182];
const GREEN = [46, 160, 90];
rect(16, 16, 496, 496, BLUE, 96); // tile
rect(136, 88, 376, 424, PAGE, 24); // page
for (const [i, done] of [
  [0, true],
  [1, true],
  [2, false],
]) {
  const y = 168 + i * 84;
  rect(176, y, 216, y + 40, done ? GREEN : INK, 8); // box
  if (done) {
    line(184, y + 21, 195, y + 31, 4, PAGE);
    line(195, y + 31, 210, y + 10, 4, PAGE);
  }
  rect(236, y + 12, 340, y + 28, INK, 8); // text line
}

// PNG: signature, IHDR, IDAT (filter byte 0 per row), IEND.
const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
};
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr[8] = 8; // bit depth
ihdr[9] = 6; // RGBA
const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let y = 0; y < SIZE; y++) px.copy(raw, y * (SIZE * 4 + 1) + 1, y * SIZE * 4, (y + 1) * SIZE * 4);
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(raw, { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
writeFileSync(new URL('../icon.png', import.meta.url), png);
process.stdout.write(`icon.png: ${SIZE}×${SIZE}, ${png.length} bytes\n`);
