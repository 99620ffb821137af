// Bundling only (serverless.yml custom.esbuild.alias): node-fetch, under the Kubernetes client, loads
// `whatwg-url` but uses it only where Node has no URL class of its own (`Url.URL || whatwgUrl.URL`);
// Node has one, so the package and its 250 KB Unicode tables are left out of the bundle.
module.exports = { URL: globalThis.URL, URLSearchParams: globalThis.URLSearchParams };
