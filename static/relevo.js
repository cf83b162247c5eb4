// Relevo's small enhancements on top of htmx. The pages work without them.
//
// Keyboard rating: j / k move the focus between the results of an expanded query;
// a digit rates the focused result with the scale value marked by data-digit on its
// rating buttons (on a 1-10 scale, 0 gives 10). The buttons are ordinary form
// buttons, so rating by key is the same request as rating by click.
(function () {
  "use strict";

  var refocus = null; // {box: id, index: n}: the result to focus again after a swap

  function docsIn(box) {
    return box ? Array.prototype.slice.call(box.querySelectorAll(".doc")) : [];
  }

  function focusedDoc() {
    var el = document.activeElement;
    return el && el.closest ? el.closest(".doc") : null;
  }

  function move(step) {
    var doc = focusedDoc();
    var docs = doc ? docsIn(doc.closest(".results")) : docsIn(document.querySelector(".results"));
    if (!doc) {
      docs = Array.prototype.slice.call(document.querySelectorAll(".results .doc"));
    }
    if (!docs.length) return;
    var index = doc ? docs.indexOf(doc) + step : 0;
    index = Math.max(0, Math.min(docs.length - 1, index));
    docs[index].focus();
  }

  function rate(doc, digit) {
    var button = doc.querySelector('button[data-digit="' + digit + '"]');
    if (!button) return;
    var box = doc.closest(".results");
    refocus = box ? { box: box.id, index: docsIn(box).indexOf(doc) } : null;
    button.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      move(event.key === "j" ? 1 : -1);
    } else if (/^[0-9]$/.test(event.key)) {
      var doc = focusedDoc();
      if (doc) {
        event.preventDefault();
        rate(doc, event.key);
      }
    }
  });

  document.addEventListener("htmx:afterSettle", function () {
    if (!refocus) return;
    var box = document.getElementById(refocus.box);
    var docs = docsIn(box);
    // A rated-but-not-returned doc comes back with the list that loads after the results.
    var pending = box && box.querySelector("details.rated-missing[open] .rated-missing-list");
    if (refocus.index >= docs.length && box && box.querySelector("details.rated-missing[open]") && !pending) return;
    var doc = docs[Math.min(refocus.index, docs.length - 1)];
    refocus = null;
    if (doc) doc.focus();
  });

  // "Show only rated" hides a query's unrated docs; the choice outlives a re-render (rating).
  function applyOnlyRated(box) {
    var id = box.getAttribute("data-only-rated");
    var on = sessionStorage.getItem("relevo-only-rated-" + id) === "1";
    box.checked = on;
    var body = box.closest(".results-body");
    if (body) body.classList.toggle("only-rated", on);
  }
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-only-rated]")) return;
    var key = "relevo-only-rated-" + box.getAttribute("data-only-rated");
    if (box.checked) sessionStorage.setItem(key, "1");
    else sessionStorage.removeItem(key);
    applyOnlyRated(box);
  });
  document.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll("input[data-only-rated]").forEach(applyOnlyRated);
  });

  // A form marked data-swap-422 shows its re-rendered self, messages next to the fields,
  // when the server refuses it (htmx leaves 4xx answers unswapped otherwise).
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail.elt;
    if (event.detail.xhr.status === 422 && elt && elt.closest && elt.closest("[data-swap-422]")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // Arriving at a query's first unrated doc (from the coverage page) focuses it, so that
  // digits rate it and j moves on to the next one.
  document.addEventListener("DOMContentLoaded", function () {
    if (location.hash.indexOf("#first-unrated-") !== 0) return;
    var doc = document.getElementById(location.hash.slice(1));
    if (doc) doc.focus();
  });

  // A second click on an expanded query collapses it instead of loading it again.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var link = event.detail.elt;
    if (!link.matches || !link.matches("a[data-expand]")) return;
    var box = document.getElementById(link.getAttribute("data-expand"));
    if (box && box.children.length) {
      event.preventDefault();
      box.innerHTML = "";
      link.setAttribute("aria-expanded", "false");
    } else {
      link.setAttribute("aria-expanded", "true");
    }
  });

  // Endpoint form: show only the fields the chosen engine uses (each names its engines in
  // data-engines). Without this script every field shows; hidden ones are still sent.
  function showEngineFields(select) {
    var form = document.getElementById(select.getAttribute("data-engine-fields"));
    if (!form) return;
    var parts = form.querySelectorAll("[data-engines]");
    for (var i = 0; i < parts.length; i++) {
      var engines = parts[i].getAttribute("data-engines").split(" ");
      parts[i].hidden = engines.indexOf(select.value) < 0;
    }
  }
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select.matches && select.matches("select[data-engine-fields]")) showEngineFields(select);
  });
  function showAllEngineFields() {
    var selects = document.querySelectorAll("select[data-engine-fields]");
    for (var i = 0; i < selects.length; i++) showEngineFields(selects[i]);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", showAllEngineFields);
  } else {
    showAllEngineFields();
  }

  // New case: picking an endpoint swaps in its engine's default template while untouched.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches("select[data-template-target]")) return;
    var area = document.getElementById(select.getAttribute("data-template-target"));
    var option = select.selectedOptions[0];
    if (!area || !option || !option.hasAttribute("data-template")) return;
    // A template is untouched while it is blank or some endpoint's default.
    var defaults = Array.prototype.map.call(select.options, function (each) {
      return each.getAttribute("data-template");
    });
    var current = area.value.replace(/\r\n/g, "\n");
    if (!current.trim() || defaults.indexOf(current) >= 0) {
      area.value = option.getAttribute("data-template");
    }
  });
})();

// The scorer editor adapts to the kind: a built-in kind fills in its preset's scale, labels
// and parameters and hides the code box; JavaScript shows the code, max score and
// environment. The scale preset picker fills the scale and labels. Without this script
// every field shows and the server ignores the ones the kind does not use.
(function () {
  "use strict";

  var form = document.getElementById("scorer-form");
  if (!form) return;

  function show(kind) {
    form.setAttribute("data-kind", kind);
    var parts = form.querySelectorAll("[data-for-kind]");
    for (var i = 0; i < parts.length; i++) {
      var forJs = parts[i].getAttribute("data-for-kind") === "javascript";
      parts[i].hidden = forJs ? kind !== "javascript" : kind === "javascript";
    }
  }

  function fill(option, withParams) {
    form.elements.scale.value = option.getAttribute("data-scale");
    form.elements.labels.value = option.getAttribute("data-labels");
    if (withParams) form.elements.params.value = option.getAttribute("data-params");
  }

  var kind = document.getElementById("scorer-kind");
  if (kind) {
    kind.addEventListener("change", function () {
      var option = kind.options[kind.selectedIndex];
      show(kind.value);
      if (option.hasAttribute("data-scale")) fill(option, true);
    });
  }

  var preset = document.getElementById("scale-preset");
  if (preset) {
    preset.addEventListener("change", function () {
      var option = preset.options[preset.selectedIndex];
      if (!option.value) return;
      fill(option, false);
      preset.value = ""; // the boxes hold it now; the server need not apply it again
    });
  }
})();

// Notes typed but not saved survive a refresh of the part of the page around them (the query
// list reloads when a run finishes): their text and open state are put back after the swap.
(function () {
  "use strict";

  var pending = null; // form id -> {fields: {name: value}, open: bool}

  document.addEventListener("htmx:beforeSwap", function (event) {
    var source = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (source && source.classList && source.classList.contains("notes-form")) return;
    var target = event.detail.target;
    if (!target || !target.querySelectorAll) return;
    var forms = target.querySelectorAll(".notes-form");
    for (var i = 0; i < forms.length; i++) {
      var boxes = forms[i].querySelectorAll("textarea");
      var fields = null;
      for (var j = 0; j < boxes.length; j++) {
        if (boxes[j].value !== boxes[j].defaultValue) {
          fields = fields || {};
          fields[boxes[j].name] = boxes[j].value;
        }
      }
      if (fields) {
        pending = pending || {};
        var details = forms[i].closest("details");
        pending[forms[i].id] = { fields: fields, open: !!(details && details.open) };
      }
    }
  });

  document.addEventListener("htmx:afterSettle", function () {
    if (!pending) return;
    var kept = pending;
    pending = null;
    Object.keys(kept).forEach(function (id) {
      var form = document.getElementById(id);
      if (!form) return;
      Object.keys(kept[id].fields).forEach(function (name) {
        if (form.elements[name]) form.elements[name].value = kept[id].fields[name];
      });
      var details = form.closest("details");
      if (details && kept[id].open) details.open = true;
    });
  });

  // A form marked data-busy says it is at work while its slow answer is on its way (a
  // judge trial asks a model about several pairs): its status line shows the data-busy
  // text ({n}: the form's n field) and its button cannot be pressed twice.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || !form.matches || !form.matches("form[data-busy]")) return;
    var n = form.elements.n ? form.elements.n.value : "";
    var note = form.querySelector(".busy-note");
    if (note) note.textContent = form.getAttribute("data-busy").replace("{n}", n);
    form.setAttribute("aria-busy", "true");
    var buttons = form.querySelectorAll("button");
    // Disabled once the submission has its values (a disabled button would be left out).
    setTimeout(function () {
      for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
    }, 0);
  });

  // Back on such a page from the history, its forms are ready again.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    document.querySelectorAll("form[data-busy][aria-busy]").forEach(function (form) {
      form.removeAttribute("aria-busy");
      var note = form.querySelector(".busy-note");
      if (note) note.textContent = "";
      form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    });
  });
})();
