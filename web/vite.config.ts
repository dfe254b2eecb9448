import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// One JS and one CSS file with fixed names: scripts/inline.mjs folds both into dist/index.html,
// which is what the C++ binary embeds.
export default defineConfig({
  base: './',
  plugins: [svelte()],
  build: {
    target: 'es2022',
    cssCodeSplit: false,
    modulePreload: false,
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    rolldownOptions: {
      output: {
        entryFileNames: 'app.js',
        assetFileNames: 'app[extname]',
      },
    },
  },
  server: {
    // `npm run dev` against a running `switchboard serve`.
    proxy: { '/api': process.env.SWITCHBOARD_URL ?? 'http://127.0.0.1:3333' },
  },
});
