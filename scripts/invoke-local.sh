#!/usr/bin/env bash
# npm run invoke:local [-- FUNCTION [PAYLOAD]]
#
# Runs one pass of a function through `sls invoke local` (osls + serverless-esbuild: the same CommonJS
# bundle that is deployed) against the demo cluster, with the state table in dynalite on loopback.
# No AWS account or credentials are needed: the cluster and NodePools come from files, the catalog is
# the bundled one, and DynamoDB is local. Prints the function's logs and EMF metrics, then the plan.
#
#   FUNCTION   consolidate (default) | emptiness
#   PAYLOAD    default {"dryRun": true}
#   CLUSTER_FILE / NODEPOOLS_FILE   other inputs (default demo/cluster.json, demo/nodepools.yaml;
#              a relative path is resolved by the function in .esbuild/.build, where serverless.yml's
#              package.patterns copies the demo files: give absolute paths for anything else)
set -euo pipefail
cd "$(dirname "$0")/.."

FUNCTION="${1:-consolidate}"
PAYLOAD="${2:-{\"dryRun\": true\}}"
CLUSTER_FILE="${CLUSTER_FILE:-demo/cluster.json}"
NODEPOOLS_FILE="${NODEPOOLS_FILE:-demo/nodepools.yaml}"
STAGE=local
TABLE_NAME="eks-consolidator-${STAGE}-state" # serverless.yml: ${self:service}-${sls:stage}-state
WORK="$(mktemp -d)"
DYNALITE_PID=""

cleanup() {
  if [[ -n "$DYNALITE_PID" ]] && kill -0 "$DYNALITE_PID" 2>/dev/null; then
    kill "$DYNALITE_PID" 2>/dev/null || true
    wait "$DYNALITE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# dynalite in the background on 127.0.0.1 (a free port), with the state table created exactly as the
# store expects it (tableSchema.ts). It writes its port to a file once the table is ACTIVE.
NODE_NO_WARNINGS=1 node --import tsx --input-type=module -e '
  import { createRequire } from "node:module";
  import { writeFileSync } from "node:fs";
  import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
  import { createStateTable } from "./src/adapters/dynamodb/tableSchema.ts";
  const dynalite = createRequire(import.meta.url)("dynalite");
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise((resolve, reject) => { server.once("error", reject); server.listen(0, "127.0.0.1", resolve); });
  const endpoint = `http://127.0.0.1:${server.address().port}`;
  const client = new DynamoDBClient({ endpoint, region: "us-east-1", credentials: { accessKeyId: "x", secretAccessKey: "x" } });
  await createStateTable(client, process.argv[1]);
  client.destroy();
  writeFileSync(process.argv[2], endpoint);
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
' "$TABLE_NAME" "$WORK/endpoint" &
DYNALITE_PID=$!

for _ in $(seq 1 100); do
  [[ -s "$WORK/endpoint" ]] && break
  kill -0 "$DYNALITE_PID" 2>/dev/null || { echo "invoke-local: dynalite did not start" >&2; exit 1; }
  sleep 0.1
done
[[ -s "$WORK/endpoint" ]] || { echo "invoke-local: dynalite did not start within 10 s" >&2; exit 1; }
ENDPOINT="$(cat "$WORK/endpoint")"
echo "invoke-local: dynalite at $ENDPOINT, table $TABLE_NAME; invoking $FUNCTION with $PAYLOAD" >&2

# serverless.yml's environment wins over the shell's in `sls invoke local`, so its values are set
# through --param; CLUSTER_SOURCE and DYNAMODB_ENDPOINT are not in serverless.yml and pass through.
# `timeout`: if the bundle failed to load, invoke local would hang (esbuild's service stays up).
status=0
env -u AWS_PROFILE -u AWS_SESSION_TOKEN \
    CLUSTER_SOURCE="file:$CLUSTER_FILE" \
    DYNAMODB_ENDPOINT="$ENDPOINT" \
    AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x AWS_REGION=us-east-1 \
  timeout 120 npx sls invoke local --stage "$STAGE" -f "$FUNCTION" -d "$PAYLOAD" \
    --param="clusterName=demo" \
    --param="nodePoolsSource=file:$NODEPOOLS_FILE" \
    >"$WORK/out" 2>"$WORK/err" || status=$?

if [[ $status -ne 0 ]]; then
  cat "$WORK/err" >&2
  cat "$WORK/out"
  [[ $status -eq 124 ]] && echo "invoke-local: timed out after 120 s" >&2
  exit "$status"
fi

# One-line JSON records are the function's logs and EMF metrics; the rest is the returned plan.
echo "--- logs and metrics (JSON lines) ---"
grep -E '^\{"(level|_aws)"' "$WORK/out" || true
echo "--- plan ---"
grep -vE '^\{"(level|_aws)"' "$WORK/out"
