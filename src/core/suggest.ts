/** Edit distance counting an adjacent transposition as one edit (optimal string alignment). */
export const editDistance = (a: string, b: string, max = Infinity): number => {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, before[j - 2]! + 1);
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > max) return max + 1;
    before = prev;
    prev = cur;
  }
  return prev[b.length]!;
};

/** The closest known name, if it is close enough to be a typo (as tsc judges). */
export const didYouMean = (name: string, known: Iterable<string>): string | undefined => {
  const max = Math.max(1, Math.floor(name.length * 0.34));
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const k of known) {
    if (k === name) continue;
    const d = editDistance(name.toLowerCase(), k.toLowerCase(), max);
    if (d < bestDistance || (d === bestDistance && best !== undefined && k < best)) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= max ? best : undefined;
};
