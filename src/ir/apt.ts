// The apt source file every backend writes for an aptRepository step: one
// definition of its path, its key's path and its deb822 text.
import type { StepOf } from './schema.js';

export const aptSourcesPath = (name: string): string => `/etc/apt/sources.list.d/${name}.sources`;

/** Where the step's signing key lives, or undefined for an unsigned source. */
export const aptKeyPath = (s: StepOf<'aptRepository'>): string | undefined =>
  s.key !== undefined || s.keyUrl !== undefined || s.keyPath !== undefined ? (s.keyPath ?? `/etc/apt/keyrings/${s.name}.asc`) : undefined;

/** The deb822 text of an apt source. */
export const debSources = (s: StepOf<'aptRepository'>): string => {
  const keyPath = aptKeyPath(s);
  return [
    'Types: deb',
    `URIs: ${s.uri}`,
    `Suites: ${s.suites.join(' ')}`,
    ...(s.components.length ? [`Components: ${s.components.join(' ')}`] : []),
    ...(keyPath ? [`Signed-By: ${keyPath}`] : []),
    '',
  ].join('\n');
};
