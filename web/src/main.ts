// The global stylesheet first, so that components' scoped rules come after it and win ties.
import './app.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { applyTheme } from './lib/theme.svelte';

applyTheme();
mount(App, { target: document.getElementById('app')! });
