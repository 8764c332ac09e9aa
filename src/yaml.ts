/**
 * The YAML reader (about 115 KB), loaded only when a file needs it (the templates file, the service profile): a
 * server without either never evaluates it, which is most of them and every cold start's first second. Whatever
 * starts a server awaits readyYaml() first when it has such a file; the readers stay synchronous after that.
 */
let yaml: typeof import('yaml') | undefined;

/** Loads the YAML reader once; resolves at once when it is loaded already. */
export async function readyYaml(): Promise<void> {
  if (yaml) return;
  // The build bundles yaml's CommonJS entry: its names come as the namespace's default.
  const loaded = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
  yaml = typeof loaded.parseDocument === 'function' ? loaded : loaded.default;
}

/** The YAML reader, or undefined when readyYaml() was not awaited. */
export function yamlReader(): typeof import('yaml') | undefined {
  return yaml;
}
