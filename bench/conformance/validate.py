"""Validates recorded MCP-over-HTTP traffic (from record.py) against the official MCP JSON
schemas, one folder per revision (`<schemas>/<revision>/schema.json`).

Every message the server sent (a JSON body, or each SSE `data:` event) must be a
`JSONRPCMessage` of the exchange's revision, each notification a `ServerNotification`, and each
result the result type of its request's method (`InitializeResult`, `ListToolsResult`,
`CallToolResult`, `DiscoverResult`, `EmptyResult` for `ping`). The revision of an exchange is
the one its `initialize` negotiated (for the requests of that `Mcp-Session-Id`), else the
request's `MCP-Protocol-Version` header or `_meta` protocolVersion. Revisions without a schema
folder are counted, not validated. Exit status 1 when any message fails.

Usage: python3 validate.py TRAFFIC.jsonl SCHEMA_DIR
"""

import json
import os
import sys
from collections import Counter

from jsonschema import validators

RESULT_TYPES = {
    "initialize": "InitializeResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "server/discover": "DiscoverResult",
    "ping": "EmptyResult",
}


class Schemas:
    def __init__(self, root):
        self.root = root
        self.documents = {}

    def validator(self, revision, name):
        path = os.path.join(self.root, revision, "schema.json")
        if not os.path.isfile(path):
            return None
        if revision not in self.documents:
            with open(path, encoding="utf-8") as file:
                self.documents[revision] = json.load(file)
        document = self.documents[revision]
        section = "$defs" if "$defs" in document else "definitions"
        if name not in document[section]:
            return None
        # The whole document with a `$ref` to one definition: references resolve inside it.
        schema = dict(document, **{"$ref": f"#/{section}/{name}"})
        return validators.validator_for(document)(schema)


def server_messages(exchange):
    """The JSON-RPC messages in a recorded response body."""
    body = exchange["response_body"]
    kind = exchange["response_headers"].get("content-type", "")
    if "text/event-stream" in kind:
        messages, data = [], []
        for line in body.splitlines() + [""]:
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line == "" and data:
                text = "\n".join(data).strip()
                data = []
                if text:
                    messages.append(json.loads(text))
        return messages
    if "application/json" in kind and body.strip():
        return [json.loads(body)]
    return []


def revision_of(exchange, request, sessions):
    headers = exchange["request_headers"]
    session = headers.get("mcp-session-id")
    if session and session in sessions:
        return sessions[session]
    meta = ((request or {}).get("params") or {}).get("_meta") or {}
    return (
        meta.get("io.modelcontextprotocol/protocolVersion")
        or headers.get("mcp-protocol-version")
        or "2025-03-26"
    )


def main(traffic, schema_dir):
    schemas = Schemas(schema_dir)
    sessions = {}
    checked = Counter()
    unchecked = Counter()
    failures = []
    statuses = Counter()
    with open(traffic, encoding="utf-8") as file:
        exchanges = [json.loads(line) for line in file if line.strip()]
    for number, exchange in enumerate(exchanges, 1):
        statuses[exchange["status"]] += 1
        try:
            request = json.loads(exchange["request_body"]) if exchange["request_body"].strip() else None
        except json.JSONDecodeError:
            request = None
        if not isinstance(request, dict):
            request = None
        method = (request or {}).get("method")
        try:
            messages = server_messages(exchange)
        except json.JSONDecodeError as error:
            failures.append(f"#{number} {method}: response is not JSON: {error}")
            continue
        if method == "initialize":
            for message in messages:
                negotiated = (message.get("result") or {}).get("protocolVersion")
                session = exchange["response_headers"].get("mcp-session-id")
                if negotiated and session:
                    sessions[session] = negotiated
        revision = revision_of(exchange, request, sessions)
        if method == "initialize":
            revision = next(
                ((m.get("result") or {}).get("protocolVersion") for m in messages if m.get("result")), revision
            )
        for message in messages:
            label = f"#{number} {exchange['method']} {method or '-'} @{revision}"
            envelope = schemas.validator(revision, "JSONRPCMessage")
            if envelope is None:
                unchecked[revision] += 1
                continue
            problems = [f"JSONRPCMessage: {error.message[:300]}" for error in envelope.iter_errors(message)]
            if "method" in message and "id" not in message:
                notification = schemas.validator(revision, "ServerNotification")
                if notification is not None:
                    problems += [f"ServerNotification: {e.message[:300]}" for e in notification.iter_errors(message)]
                kind = f"notification {message['method']}"
            elif "result" in message and request is not None and message.get("id") == request.get("id"):
                name = RESULT_TYPES.get(method)
                result = schemas.validator(revision, name) if name else None
                if result is not None:
                    problems += [f"{name}: {e.message[:300]}" for e in result.iter_errors(message["result"])]
                kind = f"result {name or 'of ' + str(method)}"
            elif "error" in message:
                kind = f"error {message['error'].get('code')}"
            else:
                kind = "message"
            checked[(revision, kind)] += 1
            for problem in problems:
                failures.append(f"{label}: {kind}: {problem}")
    print(f"{len(exchanges)} HTTP exchanges recorded; statuses: "
          + ", ".join(f"{status} ×{count}" for status, count in sorted(statuses.items())))
    print()
    print("| revision | server message | validated |")
    print("|---|---|---|")
    for (revision, kind), count in sorted(checked.items()):
        print(f"| {revision} | {kind} | {count} |")
    for revision, count in sorted(unchecked.items()):
        print(f"| {revision} | (no schema folder: not validated) | {count} |")
    print()
    if failures:
        print(f"**{len(failures)} schema violations:**")
        for failure in failures[:50]:
            print(f"- {failure}")
        return 1
    print(f"All {sum(checked.values())} server messages match the official schemas.")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
