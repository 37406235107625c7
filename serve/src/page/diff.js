// A file a tool changed, as the page shows it: the lines removed and added with two lines of
// context around each change, built as DOM nodes with text in text nodes only. The texts come
// from tools and models: nothing of them is ever parsed as HTML.

'use strict';

// Lines compared at most (before × after); past it the page names the sizes only.
const DIFF_CELLS = 2000000;
const DIFF_CONTEXT = 2;
const DIFF_SHOWN = 400;

// [sign, line] pairs, sign ' ', '-', '+' or '⋯' (unchanged lines left out); null when the
// texts are too large to compare here.
// eslint-disable-next-line no-unused-vars
function diffLines(before, after) {
  const a = before === null || before === undefined ? [] : splitLines(before);
  const b = after === null || after === undefined ? [] : splitLines(after);
  if (a.length * b.length > DIFF_CELLS) return null;
  // The longest common subsequence, from the ends, so the walk below goes forwards.
  const width = b.length + 1;
  const common = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      common[i * width + j] = a[i] === b[j]
        ? common[(i + 1) * width + j + 1] + 1
        : Math.max(common[(i + 1) * width + j], common[i * width + j + 1]);
    }
  }
  const all = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      all.push([' ', a[i]]);
      i += 1;
      j += 1;
    } else if (i < a.length && (j === b.length || common[(i + 1) * width + j] >= common[i * width + j + 1])) {
      // A change reads as what went, then what came in its place: removals first.
      all.push(['-', a[i]]);
      i += 1;
    } else {
      all.push(['+', b[j]]);
      j += 1;
    }
  }
  // Keep the changes and the context around them.
  const keep = all.map(() => false);
  all.forEach(([sign], k) => {
    if (sign === ' ') return;
    for (let c = Math.max(0, k - DIFF_CONTEXT); c <= Math.min(all.length - 1, k + DIFF_CONTEXT); c += 1) keep[c] = true;
  });
  const shown = [];
  all.forEach((line, k) => {
    if (keep[k]) shown.push(line);
    else if (shown.length && shown[shown.length - 1][0] !== '⋯') shown.push(['⋯', '']);
  });
  if (shown.length && shown[shown.length - 1][0] === '⋯') shown.pop();
  return shown;
}

function splitLines(text) {
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// The diff of `edit` as a <pre class="diff">, each line a <span> of its kind; `text(run)`
// turns a line into nodes (the page marks invisible characters there).
// eslint-disable-next-line no-unused-vars
function renderDiff(edit, text) {
  const pre = document.createElement('pre');
  pre.className = 'diff';
  pre.dataset.path = edit.path;
  const line = (kind, content) => {
    const span = document.createElement('span');
    span.className = kind;
    span.append(...content);
    pre.append(span, '\n');
  };
  if (edit.texts_left_out) {
    line('note', [`${edit.path}: changed; too large to show`]);
    return pre;
  }
  const lines = diffLines(edit.before, edit.after);
  if (lines === null) {
    line('note', [`${edit.path}: too large to compare here`]);
    return pre;
  }
  const kinds = { ' ': 'same', '-': 'removed', '+': 'added', '⋯': 'gap' };
  for (const [sign, content] of lines.slice(0, DIFF_SHOWN)) line(kinds[sign], [`${sign} `, ...text(content)]);
  if (lines.length > DIFF_SHOWN) line('note', [`… ${lines.length - DIFF_SHOWN} more lines`]);
  return pre;
}
