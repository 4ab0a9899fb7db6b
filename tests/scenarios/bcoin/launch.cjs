// Starts bcoin 1.0.2's full node (with its wallet) for the tests: bcoin/bin/node with its
// command-line options. Two adaptations, both because its native modules are not built
// (installed with --ignore-scripts; they do not build on current Node):
// - NODE_BACKEND=js: bcoin's crypto runs on its JavaScript fallbacks;
// - `leveldown` (loaded eagerly, unused with --memory=true) is replaced by a stub that throws
//   if it is ever called.
const Module = require("module");
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === "leveldown") {
    return function leveldown() {
      throw new Error("leveldown is not built: run bcoin with --memory=true");
    };
  }
  return load.call(this, request, ...rest);
};
process.env.NODE_BACKEND = "js";
require("bcoin/bin/node");
