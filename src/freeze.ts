/** Freezes a JSON-like value and everything in it: for values computed once and shared by every caller. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** How many answers are kept per list (or pair of lists): bounded, the oldest dropped first. */
const MAX_ANSWERS = 64;

/**
 * Answers worked out once per list: keyed by the list itself (the very array or object the API client
 * or the template loader keeps, handed back again while unchanged), then by a second list the answer
 * also read, then by the question. A changed list is a new object, so its answers start afresh and the
 * old ones go with the old object. The one answer cache of list_requests, list_clients and list_templates.
 */
export function answerTable<A extends object, B extends object, R>(): (first: A, second: B) => Map<string, R> {
  const table = new WeakMap<A, WeakMap<B, Map<string, R>>>();
  return (first, second) => {
    let bySecond = table.get(first);
    if (!bySecond) table.set(first, (bySecond = new WeakMap<B, Map<string, R>>()));
    let answers = bySecond.get(second);
    if (!answers) bySecond.set(second, (answers = new Map<string, R>()));
    return answers;
  };
}

/** Keeps `result` as the answer to `key` (frozen: every caller shares it), within MAX_ANSWERS; returns it. */
export function remember<R>(answers: Map<string, R>, key: string, result: R): R {
  if (answers.size >= MAX_ANSWERS) answers.delete(answers.keys().next().value!);
  answers.set(key, deepFreeze(result));
  return result;
}
