// The floors of the house, lowest first: common < spill < catalog < adapters < cli; the VS Code
// extension and the chart webview sit on top. An import may only run sideways or down.
// Checked by `npm test` (test/unit/architecture.test.ts); draw it with `npm run house`.
const floor = (name, above) => ({
  name: `${name}-imports-downward-only`,
  comment: `src/${name}/ sits below ${above.join(', ')}: it must not import from them`,
  severity: 'error',
  from: { path: `^src/${name}/` },
  to: { path: `^src/(${above.join('|')})/` },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'no circle of imports anywhere in src/', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
    floor('common', ['spill', 'catalog', 'adapters', 'cli', 'extension', 'webview']),
    floor('spill', ['catalog', 'adapters', 'cli', 'extension', 'webview']),
    floor('catalog', ['adapters', 'cli', 'extension', 'webview']),
    floor('adapters', ['cli', 'extension', 'webview']),
    floor('cli', ['extension', 'webview']),
    {
      name: 'webview-stands-alone',
      comment: 'the chart page runs in a browser: it imports nothing of the Node side',
      severity: 'error',
      from: { path: '^src/webview/' },
      to: { path: '^src/(common|spill|catalog|adapters|cli|extension)/' },
    },
    {
      name: 'vscode-only-in-extension',
      comment: 'only src/extension/ may import vscode (the engine, catalog and CLI run without VS Code)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/extension/' },
      to: { path: '^vscode$', dependencyTypes: ['core', 'npm', 'unknown', 'undetermined', 'npm-no-pkg', 'type-only'] },
    },
    {
      name: 'catalog-rooms-below-the-facade',
      comment: "the catalog's rooms serve catalog.ts; none of them imports it",
      severity: 'error',
      from: { path: '^src/catalog/[^/]+/' },
      to: { path: '^src/catalog/catalog\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
