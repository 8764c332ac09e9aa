import { readyTemplates } from '../src/templates/load.js';

// As cli.ts does before it starts a server with a templates file (the YAML reader is loaded on demand).
await readyTemplates('templates.yaml');
