// MathJax 3's configuration, a file of its own: the page's Content-Security-Policy runs no inline script.
// Only elements of class "math" (what the renderer makes of $…$ and $$…$$) are typeset; the safe extension drops
// \href to anything but http(s) and \style/\class.
window.MathJax = {
  loader: { load: ["ui/safe"] },
  tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["$$", "$$"]] },
  options: {
    ignoreHtmlClass: "tex2jax_ignore",
    processHtmlClass: "math",
    safeOptions: { safeProtocols: { http: true, https: true, file: false, javascript: false, data: false } },
    menuOptions: { settings: { zoom: "None" } },
  },
  startup: {
    ready() {
      MathJax.startup.defaultReady();
      MathJax.startup.promise.then(() => document.body.setAttribute("data-mathjax", "done"));
    },
  },
};
