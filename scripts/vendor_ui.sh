#!/usr/bin/env bash
# Rebuild the inspector's vendored graph bundle from the npm registry:
#   daemon/chrysalisd/static/vendor/graph.js          (one minified ES module, see the entry)
#   daemon/chrysalisd/static/vendor/graph.LICENSES.txt (the licence of every package bundled)
#   daemon/chrysalisd/static/vendor/graph.sha256       (the bundle's checksum)
# The output is committed: CI and users never need npm. Run this to change a version, then
# commit the three files; `scripts/vendor_ui.sh --check` rebuilds in a temporary folder and
# fails when the committed bundle differs from what these pinned versions make.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(sigma@3.0.3 graphology@0.26.0 graphology-layout-forceatlas2@0.10.1 esbuild@0.28.2)
OUT=daemon/chrysalisd/static/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp scripts/vendor_ui.entry.js "$work/entry.js"
(cd "$work" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund \
    --save-exact "${PACKAGES[@]}" >/dev/null)
mkdir -p "$work/out"
# No eval, no Function(): the page's CSP (script-src 'self') would refuse them.
"$work/node_modules/.bin/esbuild" "$work/entry.js" --bundle --minify --format=esm \
    --target=es2020 --legal-comments=none --log-level=warning --outfile="$work/out/graph.js"
if grep -qE '\beval\(|new Function\(' "$work/out/graph.js"; then
    echo "the bundle calls eval or new Function: the inspector's CSP refuses it" >&2
    exit 1
fi
{
    echo "The inspector's graph bundle (graph.js) is built by scripts/vendor_ui.sh from these"
    echo "npm packages and what they depend on; each one's licence follows."
    for dir in $(cd "$work/node_modules" && find . -maxdepth 2 -name package.json \
                 -not -path './.bin/*' -printf '%h\n' | sort); do
        name=${dir#./}
        case $name in esbuild|@esbuild/*) continue ;; esac  # the build tool: not shipped
        version=$(node -p "require('$work/node_modules/$name/package.json').version")
        licence=$(find "$work/node_modules/$name" -maxdepth 1 -iname 'licen[cs]e*' | head -1)
        echo
        echo "==== $name $version ===="
        if [ -n "$licence" ]; then cat "$licence"; else
            node -p "'licence: ' + require('$work/node_modules/$name/package.json').license"
        fi
    done
} > "$work/out/graph.LICENSES.txt"
(cd "$work/out" && sha256sum graph.js > graph.sha256)

if [ "${1:-}" = "--check" ]; then
    diff -q "$work/out/graph.sha256" "$OUT/graph.sha256" && sha256sum -c --quiet \
        --status <(sed "s#graph.js#$OUT/graph.js#" "$OUT/graph.sha256") && echo "vendored bundle matches"
else
    mkdir -p "$OUT" && cp "$work/out/"* "$OUT/"
    cat "$OUT/graph.sha256"; wc -c "$OUT/graph.js"
fi
