// The little formatting model text gets: paragraphs (blank lines between) and ``` code blocks. The result is plain
// strings for the template to put in as text: model output never becomes HTML.

export type TextBlock = { kind: 'p'; text: string } | { kind: 'code'; text: string; lang: string };

export function textBlocks(text: string): TextBlock[] {
  const out: TextBlock[] = [];
  let para: string[] = [];
  let code: string[] | null = null;
  let lang = '';
  const flush = () => {
    if (para.length) out.push({ kind: 'p', text: para.join('\n') });
    para = [];
  };
  for (const line of text.split('\n')) {
    const fence = /^\s*```\s*([^`\s]*)\s*$/.exec(line);
    if (code) {
      if (fence && !fence[1]) {
        out.push({ kind: 'code', text: code.join('\n'), lang });
        code = null;
      } else {
        code.push(line);
      }
    } else if (fence) {
      flush();
      code = [];
      lang = fence[1];
    } else if (line.trim() === '') {
      flush();
    } else {
      para.push(line);
    }
  }
  // A block still open (the answer is streaming, or the model forgot to close it) is shown as code so far.
  if (code) out.push({ kind: 'code', text: code.join('\n'), lang });
  flush();
  return out;
}
