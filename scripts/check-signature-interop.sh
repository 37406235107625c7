#!/usr/bin/env bash
# Checks that plugin signatures (host/src/oci/signature/) interoperate with a standard tool:
# skopeo, whose sigstore support is containers/image's reading and writing of cosign's format.
#
# Against a throwaway local registry (Debian's `docker-registry`, on 127.0.0.1), it checks:
#  1. a cosign-encrypted key written by our `generate` signs in `skopeo copy
#     --sign-by-sigstore-private-key` (containers/image reads our key format);
#  2. the `.sig` manifest skopeo pushed verifies with our `TrustedKeys::verify` (fetched with
#     curl from the registry's HTTP API);
#  3. a `.sig` we write (payload + signature from `SigningKey::sign`, pushed with curl the way
#     cosign lays it out) passes skopeo's `sigstoreSigned` policy check, and the same policy
#     with another key refuses it (so the check is real).
# Not part of the test suite: it needs skopeo, docker-registry, curl and jq
# (`apt-get install -y skopeo docker-registry curl jq`) and takes about a minute.
# Run from the repository root: scripts/check-signature-interop.sh
set -euo pipefail

for tool in skopeo docker-registry curl jq openssl cargo; do
    command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install -y skopeo docker-registry curl jq)" >&2; exit 2; }
done

work=$(mktemp -d)
registry_pid=
cleanup() {
    [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# --- A registry on a free loopback port -------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
registry="127.0.0.1:$port"
mkdir -p "$work/storage"
cat >"$work/registry.yml" <<EOF
version: 0.1
log: { level: warn }
storage:
  filesystem: { rootdirectory: $work/storage }
  delete: { enabled: true }
http:
  addr: $registry
EOF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 50); do curl -fs "http://$registry/v2/" >/dev/null && break; sleep 0.2; done
curl -fs "http://$registry/v2/" >/dev/null || { cat "$work/registry.log" >&2; echo "registry did not start" >&2; exit 1; }

# --- Two tiny OCI images as OCI layouts (different content, so different digests) -------
sha() { sha256sum "$1" | cut -d' ' -f1; }
make_layout() { # make_layout DIR TEXT
    local dir=$1 text=$2
    mkdir -p "$dir/blobs/sha256" "$work/content"
    printf '%s\n' "$text" >"$work/content/hello.txt"
    tar -C "$work/content" -cf "$work/layer.tar" hello.txt
    gzip -n -f "$work/layer.tar"
    local layer diff_id config manifest
    layer=$(sha "$work/layer.tar.gz"); diff_id=$(gzip -dc "$work/layer.tar.gz" | sha256sum | cut -d' ' -f1)
    cp "$work/layer.tar.gz" "$dir/blobs/sha256/$layer"
    printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$diff_id" >"$work/config.json"
    config=$(sha "$work/config.json"); cp "$work/config.json" "$dir/blobs/sha256/$config"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%d}]}' \
        "$config" "$(stat -c%s "$work/config.json")" "$layer" "$(stat -c%s "$work/layer.tar.gz")" >"$work/manifest.json"
    manifest=$(sha "$work/manifest.json"); cp "$work/manifest.json" "$dir/blobs/sha256/$manifest"
    printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
    printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]}' \
        "$manifest" "$(stat -c%s "$work/manifest.json")" >"$dir/index.json"
}
make_layout "$work/image-a" "signed by skopeo"
make_layout "$work/image-b" "signed by agent-host"

# --- skopeo's configuration: sigstore attachments on, and policies -----------------------
mkdir -p "$work/registries.d"
printf 'default-docker:\n  use-sigstore-attachments: true\n' >"$work/registries.d/default.yaml"
export SIGNATURE_INTEROP_DIR=$work
step() { # runs one of the module's interop steps (host/src/oci/signature/interop.rs)
    cargo test -q -p agent-host --lib "oci::signature::interop::$1" -- --ignored --exact --nocapture
}
printf 'interop-password' >"$work/password"
echo "building and running the module's interop steps (cargo test, CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target})"
step generate_key
policy() { # policy FILE KEY: only sigstore signatures by KEY are accepted from the registry
    printf '{"default":[{"type":"reject"}],"transports":{"docker":{"%s":[{"type":"sigstoreSigned","keyPath":"%s"}]},"oci":{"":[{"type":"insecureAcceptAnything"}]},"dir":{"":[{"type":"insecureAcceptAnything"}]}}}' \
        "$registry" "$2" >"$1"
}
policy "$work/policy.json" "$work/cosign.pub"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/stranger.pem" 2>/dev/null
openssl ec -in "$work/stranger.pem" -pubout -out "$work/stranger.pub" 2>/dev/null
policy "$work/policy-stranger.json" "$work/stranger.pub"
skopeo_=(skopeo --policy "$work/policy.json" --registries.d "$work/registries.d")

manifest_digest() { # the digest the registry gives a repository's tag
    curl -fsI -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$registry/v2/$1/manifests/$2" |
        tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}'
}

# --- 1 and 2: skopeo signs with our key; we verify what it stored --------------------------
# Debian's skopeo 1.9.3 is built with sigstore disabled ("Debian-local change: sigstore
# disabled"): then these two checks cannot run, which is reported, and check 3 still runs.
skopeo_signs=yes
if ! "${skopeo_[@]}" copy --dest-tls-verify=false \
    --sign-by-sigstore-private-key "$work/cosign.key" --sign-passphrase-file "$work/password" \
    "oci:$work/image-a:v1" "docker://$registry/plugins/a:v1" 2>"$work/sign.log"; then
    cat "$work/sign.log" >&2
    grep -q 'sigstore disabled' "$work/sign.log" || exit 1
    skopeo_signs=no
    echo "SKIPPED 1-2: this skopeo cannot sign with a sigstore key: $(tail -1 "$work/sign.log")"
fi
if [ "$skopeo_signs" = yes ]; then
    digest_a=$(manifest_digest plugins/a v1)
    sig_tag="${digest_a/:/-}.sig"
    curl -fs -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
        "http://$registry/v2/plugins/a/manifests/$sig_tag" >"$work/sig-a.json"
    [ "$(jq -r '.layers[0].mediaType' "$work/sig-a.json")" = application/vnd.dev.cosign.simplesigning.v1+json ]
    jq -r '.layers[0].annotations["dev.cosignproject.cosign/signature"]' "$work/sig-a.json" >"$work/signature-in"
    curl -fs "http://$registry/v2/plugins/a/blobs/$(jq -r '.layers[0].digest' "$work/sig-a.json")" >"$work/payload-in"
    printf '%s' "$digest_a" >"$work/digest-in"
    echo "skopeo's payload: $(cat "$work/payload-in")"
    step verify_external
    echo "ok 1-2: skopeo signed $digest_a with our cosign.key; its .sig verifies with TrustedKeys::verify"
fi

# --- 3: we sign; skopeo's policy accepts it, and refuses it under another key ------------
skopeo --policy "$work/policy.json" copy --dest-tls-verify=false "oci:$work/image-b:v1" "docker://$registry/plugins/b:v1" \
    --registries.d "$work/registries.d"
digest_b=$(manifest_digest plugins/b v1)
printf '%s' "$digest_b" >"$work/digest-out"
printf '%s' "$registry/plugins/b" >"$work/reference-out"
COSIGN_PASSWORD=$(cat "$work/password") step sign_for_external
upload() { # upload REPO FILE: pushes a blob, prints its digest
    local digest location
    digest="sha256:$(sha "$2")"
    location=$(curl -fsi -X POST "http://$registry/v2/$1/blobs/uploads/" | tr -d '\r' |
        awk -F': ' 'tolower($1)=="location"{print $2}')
    case $location in http*) ;; *) location="http://$registry$location" ;; esac
    case $location in *\?*) location="$location&digest=$digest" ;; *) location="$location?digest=$digest" ;; esac
    curl -fs -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$2" "$location" >/dev/null
    printf '%s' "$digest"
}
payload_digest=$(upload plugins/b "$work/payload-out")
printf '{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":["%s"]}}' "$payload_digest" >"$work/sig-config.json"
config_digest=$(upload plugins/b "$work/sig-config.json")
jq -n --arg cd "$config_digest" --argjson cs "$(stat -c%s "$work/sig-config.json")" \
      --arg pd "$payload_digest" --argjson ps "$(stat -c%s "$work/payload-out")" \
      --arg sig "$(cat "$work/signature-out")" \
    '{schemaVersion:2, mediaType:"application/vnd.oci.image.manifest.v1+json",
      config:{mediaType:"application/vnd.oci.image.config.v1+json", digest:$cd, size:$cs},
      layers:[{mediaType:"application/vnd.dev.cosign.simplesigning.v1+json", digest:$pd, size:$ps,
               annotations:{"dev.cosignproject.cosign/signature":$sig}}]}' >"$work/sig-b.json"
curl -fs -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary "@$work/sig-b.json" \
    "http://$registry/v2/plugins/b/manifests/${digest_b/:/-}.sig" >/dev/null
if ! "${skopeo_[@]}" copy --src-tls-verify=false "docker://$registry/plugins/b@$digest_b" "dir:$work/pulled-b" \
    2>"$work/check.log"; then
    cat "$work/check.log" >&2
    grep -q 'sigstore disabled' "$work/check.log" || exit 1
    echo "SKIPPED 3: this skopeo cannot check sigstore signatures: $(tail -1 "$work/check.log")"
    # Does it reach the signature at all? An image with no .sig, for comparison.
    skopeo --policy "$work/policy.json" copy --dest-tls-verify=false "oci:$work/image-a:v1" \
        "docker://$registry/plugins/unsigned:v1" --registries.d "$work/registries.d" >/dev/null
    if ! "${skopeo_[@]}" copy --src-tls-verify=false "docker://$registry/plugins/unsigned:v1" \
        "dir:$work/pulled-unsigned" 2>"$work/unsigned.log"; then
        echo "for comparison, an image with no .sig is refused with: $(tail -1 "$work/unsigned.log")"
    fi
    echo "done: checks 1-3 need a skopeo built with sigstore support (Debian's 1.9.3 is not)"
    exit 0
fi
echo "ok 3: skopeo's sigstoreSigned policy accepts the .sig we wrote for $digest_b"
if skopeo --policy "$work/policy-stranger.json" --registries.d "$work/registries.d" copy --src-tls-verify=false \
    "docker://$registry/plugins/b@$digest_b" "dir:$work/refused-b" 2>"$work/refused.log"; then
    echo "FAIL: skopeo accepted our signature under a policy that trusts another key" >&2; exit 1
fi
echo "ok 3': under a policy trusting another key skopeo refuses it: $(tail -1 "$work/refused.log")"
# And skopeo's own signature passes its own policy.
if [ "$skopeo_signs" = yes ]; then
    "${skopeo_[@]}" copy --src-tls-verify=false "docker://$registry/plugins/a@$digest_a" "dir:$work/pulled-a"
fi
echo "ok: all signature interop checks passed"
