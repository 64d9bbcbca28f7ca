// Word-level differences between two texts: the words of each that the other lacks, found with
// a longest common subsequence over words compared without case and punctuation.

const MAX_WORDS = 400;

function tokens(text) {
  return text.split(/(\s+)/).filter((t) => t.length > 0);
}

function norm(word) {
  return word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
}

// For each word token of `a` and `b`, whether it is shared; whitespace tokens count as shared.
export function wordDiff(a, b) {
  const ta = tokens(a), tb = tokens(b);
  const wa = ta.map((t, i) => [i, norm(t)]).filter(([i]) => !/^\s+$/.test(ta[i]));
  const wb = tb.map((t, i) => [i, norm(t)]).filter(([i]) => !/^\s+$/.test(tb[i]));
  const sharedA = new Set(), sharedB = new Set();
  if (wa.length > MAX_WORDS || wb.length > MAX_WORDS) {
    return { a: ta.map((t) => [t, true]), b: tb.map((t) => [t, true]) };
  }
  const n = wa.length, m = wb.length;
  const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i][j] = wa[i][1] === wb[j][1] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (wa[i][1] === wb[j][1]) { sharedA.add(wa[i][0]); sharedB.add(wb[j][0]); i++; j++; }
    else if (table[i + 1][j] >= table[i][j + 1]) i++;
    else j++;
  }
  const mark = (ts, shared) => ts.map((t, k) => [t, /^\s+$/.test(t) || shared.has(k) || norm(t) === ""]);
  return { a: mark(ta, sharedA), b: mark(tb, sharedB) };
}
