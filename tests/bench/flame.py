#!/usr/bin/env python3
# flame.py: a flame graph (SVG) of a profile, for the closing notes of
# performance work.  Owns folding `perf script` output into stacks and
# drawing them: `perf script -i perf.data | flame.py [--comm C] TITLE > f.svg`.
# Written here because Debian packages no flame graph tool.
import argparse
import html
import re
import sys
import zlib

WIDTH = 1200
ROW = 16
MIN_PX = 0.3        # frames thinner than this are not drawn


def frames(lines):
    """One sample's frames from perf script's lines, leaf first."""
    out = []
    for ln in lines:
        m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", ln)
        if not m:
            continue
        sym, dso = m.group(1), m.group(2)
        if sym == "[unknown]":
            sym = "[%s]" % dso.rsplit("/", 1)[-1].strip("[]")
        out.append(re.sub(r"\+0x[0-9a-f]+$", "", sym))
    return out


def fold(stream, comm):
    """{"root;...;leaf": samples} of every sample of comm (all if None)."""
    stacks, block = {}, []

    def flush():
        if not block:
            return
        head = block[0].split()
        if comm is None or (head and head[0] == comm):
            f = frames(block[1:])
            if f:
                key = ";".join([head[0]] + f[::-1])
                stacks[key] = stacks.get(key, 0) + 1
        block.clear()
    for ln in stream:
        ln = ln.rstrip("\n")
        if not ln.strip():
            flush()
        elif not ln.startswith((" ", "\t")):
            flush()
            block.append(ln)
        else:
            block.append(ln)
    flush()
    return stacks


def tree(stacks):
    """A node: [samples, {name: node}]."""
    root = [0, {}]
    for key, n in stacks.items():
        node = root
        node[0] += n
        for name in key.split(";"):
            node = node[1].setdefault(name, [0, {}])
            node[0] += n
    return root


def colour(name):
    h = zlib.crc32(name.encode())
    return "rgb(%d,%d,%d)" % (205 + h % 50, 80 + (h >> 8) % 120,
                              (h >> 16) % 60)


def draw(root, title):
    total = root[0] or 1
    depth = [0]
    rects = []

    def walk(node, x, level):
        depth[0] = max(depth[0], level)
        for name, child in sorted(node[1].items()):
            w = child[0] * WIDTH / total
            if w >= MIN_PX:
                rects.append((x, level, w, name, child[0]))
                walk(child, x, level + 1)
            x += w
    walk(root, 0.0, 0)
    h = (depth[0] + 3) * ROW
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="monospace" font-size="11">' % (WIDTH, h),
           '<rect width="100%" height="100%" fill="#fff"/>',
           '<text x="4" y="13">%s (%d samples)</text>' %
           (html.escape(title), total)]
    for x, level, w, name, n in rects:
        y = h - (level + 1) * ROW
        label = "%s (%d, %.1f%%)" % (name, n, 100.0 * n / total)
        out.append('<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" '
                   'height="%d" fill="%s"/>' % (html.escape(label), x, y, w,
                                                ROW - 1, colour(name)))
        chars = int(w / 7)
        if chars >= 3:
            t = name if len(name) <= chars else name[:chars - 2] + ".."
            out.append('<text x="%.1f" y="%d">%s</text>' %
                       (x + 2, y + ROW - 4, html.escape(t)))
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="perf script -> flame graph SVG")
    ap.add_argument("--comm", help="only the samples of this command")
    ap.add_argument("title")
    a = ap.parse_args()
    stacks = fold(sys.stdin, a.comm)
    if not stacks:
        print("flame.py: no samples (perf script output on stdin?)",
              file=sys.stderr)
        return 1
    sys.stdout.write(draw(tree(stacks), a.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
