// theme.js: the classroom's pages in the machine's theme. It is a classic
// script in each page's head, run before the page is first painted, so a
// dark room never flashes white: it sets data-theme on <html> as the
// playground does (web/app.js), and style.css, race.css and classroom.css
// all read that one attribute, so the race view inside a page is always in
// the page's theme. A theme chosen with the playground's button (stored
// on this server) wins; otherwise the page follows prefers-color-scheme,
// also when the machine switches it during a class.
(() => {
  const media = matchMedia('(prefers-color-scheme: dark)');
  const chosen = () => {
    try {
      return localStorage.getItem('idemlab.theme');
    } catch {
      return null; // storage refused (private mode): the machine decides
    }
  };
  const apply = () => {
    const c = chosen();
    document.documentElement.dataset.theme = c === 'dark' || c === 'light' ? c : media.matches ? 'dark' : 'light';
  };
  apply();
  media.addEventListener('change', apply);
})();
