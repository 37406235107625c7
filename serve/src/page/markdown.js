// Markdown as the page shows a reply: headings, paragraphs, lists, fenced code blocks,
// tables and inline code, strong and emphasis, built as DOM nodes with text in text nodes only. Nothing
// a model writes is ever parsed as HTML: `<b>` in a reply stays the four characters it is.
// `text(run)` turns a plain run into nodes (the page marks invisible characters there).

'use strict';

// eslint-disable-next-line no-unused-vars
function renderMarkdown(source, text) {
  const blocks = [];
  const lines = String(source).replace(/\r\n?/g, '\n').split('\n');
  let paragraph = [];
  let list = null; // { node, ordered }

  const endParagraph = () => {
    if (paragraph.length) blocks.push(markdownNode('p', markdownInline(paragraph.join('\n'), text)));
    paragraph = [];
  };
  const endList = () => {
    list = null;
  };

  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      endParagraph();
      endList();
      const body = [];
      for (i += 1; i < lines.length && !lines[i].trim().startsWith(fence[1]); i += 1) body.push(lines[i]);
      const code = markdownNode('code', text(body.join('\n')));
      if (fence[2]) code.dataset.language = fence[2];
      blocks.push(markdownNode('pre', [code]));
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && tableDelimiter(lines[i + 1]) && tableCells(line).length === tableDelimiter(lines[i + 1]).length) {
      endParagraph();
      endList();
      const aligns = tableDelimiter(lines[i + 1]);
      const rows = [];
      for (i += 2; i < lines.length && lines[i].includes('|') && lines[i].trim(); i += 1) rows.push(tableCells(lines[i]));
      i -= 1;
      blocks.push(markdownTable(tableCells(line), rows, aligns, text));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      endParagraph();
      endList();
      blocks.push(markdownNode(`h${heading[1].length}`, markdownInline(heading[2], text)));
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/.exec(line);
    if (item) {
      endParagraph();
      const ordered = item[2] !== undefined;
      if (!list || list.ordered !== ordered) {
        list = { node: markdownNode(ordered ? 'ol' : 'ul', []), ordered };
        if (ordered && item[2] !== '1') list.node.setAttribute('start', String(Number(item[2])));
        blocks.push(list.node);
      }
      list.node.append(markdownNode('li', markdownInline(item[3], text)));
      continue;
    }
    if (!line.trim()) {
      endParagraph();
      endList();
      continue;
    }
    if (list && /^\s{2,}\S/.test(line)) {
      // A continuation of the last item.
      list.node.lastChild.append('\n', ...markdownInline(line.trim(), text));
      continue;
    }
    endList();
    paragraph.push(line);
  }
  endParagraph();
  return blocks;
}

// A table's cells: the row split at its pipes (not at an escaped `\|`), the outer ones
// optional, each cell trimmed.
function tableCells(line) {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

// The alignment of each column ('left', 'center', 'right' or '') when `line` is the row
// under a table's header (`|---|:--:|`), null otherwise.
function tableDelimiter(line) {
  if (!line.includes('-') || !line.includes('|')) return null;
  const cells = tableCells(line);
  if (!cells.every((cell) => /^:?-+:?$/.test(cell))) return null;
  return cells.map((cell) => {
    if (cell.startsWith(':') && cell.endsWith(':')) return 'center';
    if (cell.endsWith(':')) return 'right';
    return cell.startsWith(':') ? 'left' : '';
  });
}

function markdownTable(header, rows, aligns, text) {
  const cell = (tag, content, column) => {
    const made = markdownNode(tag, markdownInline(content || '', text));
    if (aligns[column]) made.dataset.align = aligns[column];
    return made;
  };
  const head = markdownNode('tr', header.map((content, column) => cell('th', content, column)));
  const body = rows.map((row) => markdownNode('tr', header.map((_, column) => cell('td', row[column], column))));
  return markdownNode('table', [markdownNode('thead', [head]), markdownNode('tbody', body)]);
}

function markdownNode(tag, children) {
  const made = document.createElement(tag);
  made.append(...children);
  return made;
}

// `code`, **strong** (or __strong__), *emphasis* (or _emphasis_); everything else is text.
// Underscores mark nothing inside a word (`window.__name__x`, `snake_case`), as in CommonMark.
function markdownInline(run, text) {
  const nodes = [];
  const pattern = /`([^`\n]+)`|\*\*(\S(?:[^*]*?\S)?)\*\*|(?<![\w])__(\S(?:[^_]*?\S)?)__(?![\w])|\*(\S(?:[^*]*?\S)?)\*|(?<![\w])_(\S(?:[^_]*?\S)?)_(?![\w])/g;
  let last = 0;
  for (const match of run.matchAll(pattern)) {
    if (match.index > last) nodes.push(...text(run.slice(last, match.index)));
    const [, code, strong1, strong2, em1, em2] = match;
    if (code !== undefined) nodes.push(markdownNode('code', text(code)));
    else if (strong1 !== undefined || strong2 !== undefined) nodes.push(markdownNode('strong', text(strong1 ?? strong2)));
    else nodes.push(markdownNode('em', text(em1 ?? em2)));
    last = match.index + match[0].length;
  }
  if (last < run.length) nodes.push(...text(run.slice(last)));
  return nodes;
}
