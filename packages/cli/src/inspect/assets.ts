/** The inspector's only stylesheet and script, served from the same origin so the CSP can forbid inline code. */

export const APP_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;background:#f5f6f8}
header{display:flex;gap:1rem;align-items:baseline;padding:.7rem 1.5rem;background:#1d2430;color:#fff}
header a.brand{color:#fff;font-weight:700;text-decoration:none}
header .where{color:#aab3c2}
main{max-width:1100px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.5rem;margin:.6rem 0}
h2{font-size:1.1rem;margin:1.4rem 0 .5rem}
a{color:#2456c7}
.ns{font-size:.9rem;background:#e3e8f3;border-radius:4px;padding:.1rem .4rem;font-weight:400}
.count{font-size:.8rem;background:#e3e8f3;border-radius:999px;padding:.05rem .5rem;font-weight:400;color:#445}
.muted{color:#667}
.hidden{display:none}
.flash{background:#e6f4ea;border:1px solid #b7dfc3;padding:.5rem .8rem;border-radius:6px}
.error{color:#a11}
table.grid{width:100%;border-collapse:collapse;background:#fff;border:1px solid #dde1e8;border-radius:6px;overflow:hidden}
.grid th,.grid td{padding:.5rem .7rem;border-bottom:1px solid #eceef2;text-align:left;vertical-align:top}
.grid th{background:#fafbfc;font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:#556}
.grid td.n{text-align:right;font-variant-numeric:tabular-nums}
.grid td.when{white-space:nowrap;color:#556}
.grid td.acts{white-space:nowrap;text-align:right}
.meta{font-size:.8rem;color:#667;margin-top:.15rem;word-break:break-word}
.statement{font-weight:500;text-decoration:none}
nav.tabs{display:flex;gap:.3rem;border-bottom:1px solid #dde1e8;margin-bottom:.8rem}
nav.tabs a{padding:.4rem .8rem;text-decoration:none;border-radius:6px 6px 0 0}
nav.tabs a[aria-current]{background:#fff;border:1px solid #dde1e8;border-bottom-color:#fff;margin-bottom:-1px;font-weight:600}
form.search{display:flex;gap:.5rem;margin:.5rem 0 .8rem}
form.search input[type=search]{flex:1;padding:.5rem .7rem;border:1px solid #c8cfdb;border-radius:6px;font:inherit}
button,.btn{font:inherit;font-size:.85rem;padding:.35rem .75rem;border-radius:6px;border:1px solid #c8cfdb;background:#fff;color:#1d2430;cursor:pointer;text-decoration:none;display:inline-block}
button:hover,.btn:hover{background:#f0f3f8}
button.danger{border-color:#e2b4b4;color:#a11}
button.ok{border-color:#a9d3b5;color:#17692f}
form.inline{display:inline;margin-left:.35rem}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:.8rem 1rem;margin:.7rem 0}
.card.current{border-color:#2456c7;box-shadow:0 0 0 2px #dbe5fb}
.card h3{margin:0 0 .2rem;font-size:1rem}
.badge{font-size:.72rem;padding:.05rem .45rem;border-radius:999px;vertical-align:middle;font-weight:500;background:#eee}
.st-active{background:#e6f4ea;color:#17692f}.st-pending{background:#fff4d6;color:#7a5600}
.st-superseded{background:#eceef2;color:#445}.st-retracted,.st-forgotten{background:#fbe9e9;color:#a11}
ol.timeline{list-style:none;margin:.6rem 0 0;padding:0 0 0 .9rem;border-left:2px solid #dde1e8}
ol.timeline li{margin:.35rem 0;display:flex;gap:.8rem}
ol.timeline time{font-size:.8rem;color:#667;white-space:nowrap;font-variant-numeric:tabular-nums}
blockquote{margin:.25rem 0 0;padding:.2rem .6rem;border-left:3px solid #c8cfdb;color:#334;background:#fafbfc}
section.edit form.correct{display:flex;gap:.5rem;align-items:center;margin-bottom:.6rem}
section.edit input#text{flex:1;padding:.45rem .6rem;border:1px solid #c8cfdb;border-radius:6px;font:inherit}
section.edit form.inline{margin-left:0}
pre#block{background:#1d2430;color:#e8ecf3;padding:.8rem 1rem;border-radius:8px;white-space:pre-wrap;word-break:break-word;font-size:.85rem}
code{font-size:.8rem}
`;

export const APP_JS = `
(function () {
  var q = document.getElementById('q');
  var table = document.getElementById('beliefs');
  if (!q || !table) return;
  var rows = Array.prototype.slice.call(table.querySelectorAll('tbody tr'));
  var shown = document.getElementById('shown');
  var none = document.getElementById('none');
  function filter() {
    var term = q.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (r) {
      var hit = !term || (r.getAttribute('data-text') || '').indexOf(term) !== -1;
      r.hidden = !hit;
      if (hit) n++;
    });
    if (shown) shown.textContent = String(n);
    if (none) none.classList.toggle('hidden', n !== 0);
  }
  q.addEventListener('input', filter);
})();
`;
