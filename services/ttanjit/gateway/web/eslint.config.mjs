// ESLint (flat config) for the web client: the browser modules in
// static/js and the node tests in web/. `make lint` runs it from the gateway
// folder: eslint -c web/eslint.config.mjs static/js web.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["web/node_modules/**", "static/fonts/**"] },
  js.configs.recommended,
  {
    files: ["static/js/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
    rules: { "no-unused-vars": ["error", { args: "none" }] },
  },
  {
    files: ["web/**/*.mjs"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
];
