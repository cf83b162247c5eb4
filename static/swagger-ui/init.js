// Starts Swagger UI on the API schema; kept in a file so the page needs no inline script.
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({ url: root.dataset.schema, dom_id: "#swagger-ui" });
});
