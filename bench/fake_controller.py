"""A RESTCONF stand-in for a network controller that really mounts what it is given.

It takes OpenDaylight-style registrations (PATCH on
/restconf/data/network-topology:network-topology/topology=topology-netconf),
then mounts every registered node over NETCONF-over-TCP (tcp-only nodes:
connect, read the device's hello, answer with its own, keep the session
open), at most `concurrency` mounts at a time, and serves the topology with
each node's connection-status (connecting, connected, unable-to-connect) on
GET ...?content=nonconfig, as OpenDaylight does. It is what bench scripts
point `fleetsim --controller-ip` and `fleetsim-stress controller-mount` at;
it is not a controller (no schemas, no reconnects, no SSH).

Run alone: /usr/bin/python3 bench/fake_controller.py --port 18181
"""

import argparse
import asyncio
import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOPOLOGY_PATH = "/restconf/data/network-topology:network-topology/topology=topology-netconf"
HELLO = (b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities><capability>'
         b"urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>]]>]]>")


def node_field(node, name):
    """A node's leaf, flat ("netconf-node-topology:host") or in a netconf-node container."""
    for key, value in node.items():
        if key.split(":")[-1] == name:
            return value
        if isinstance(value, dict) and key.split(":")[-1] == "netconf-node":
            found = node_field(value, name)
            if found is not None:
                return found
    return None


class Controller:
    def __init__(self, port, username="admin", password="admin", concurrency=200, host="127.0.0.1"):
        self.auth = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
        self.concurrency = concurrency
        self.lock = threading.Lock()
        self.nodes = {}        # node-id -> {"host", "port", "status"}
        self.patches = 0       # registration requests taken
        self.first_patch = None
        self.all_connected_at = None
        self.writers = []      # open sessions, kept until stop()
        self.loop = asyncio.new_event_loop()
        self.queue = None
        self.loop_thread = threading.Thread(target=self._run_loop, daemon=True)
        self.loop_thread.start()
        controller = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _reply(self, code, body=b"", ctype="application/yang-data+json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_PATCH(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Authorization") != controller.auth:
                    return self._reply(401, b'{"errors":{"error":[{"error-tag":"access-denied"}]}}')
                if self.path != TOPOLOGY_PATH:
                    return self._reply(404)
                try:
                    doc = json.loads(body)
                    nodes = doc["network-topology:topology"][0]["node"]
                except (ValueError, KeyError, IndexError, TypeError):
                    return self._reply(400, b'{"errors":{"error":[{"error-tag":"malformed-message"}]}}')
                controller.register(nodes)
                self._reply(200)

            def do_GET(self):
                if self.headers.get("Authorization") != controller.auth:
                    return self._reply(401)
                if self.path.split("?")[0] != TOPOLOGY_PATH:
                    return self._reply(404)
                self._reply(200, json.dumps(controller.topology()).encode())

        self.http = ThreadingHTTPServer((host, port), Handler)
        self.http.daemon_threads = True
        self.http_thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.http_thread.start()

    def _run_loop(self):
        asyncio.set_event_loop(self.loop)
        self.queue = asyncio.Queue()
        for _ in range(self.concurrency):
            self.loop.create_task(self._mounter())
        self.loop.run_forever()

    def register(self, nodes):
        with self.lock:
            self.patches += 1
            self.first_patch = self.first_patch or time.monotonic()
            for n in nodes:
                node_id = n["node-id"]
                if node_id in self.nodes:
                    continue
                self.nodes[node_id] = {"host": node_field(n, "host"), "port": int(node_field(n, "port")),
                                       "status": "connecting"}
                self.loop.call_soon_threadsafe(self.queue.put_nowait, node_id)

    async def _mounter(self):
        while True:
            node_id = await self.queue.get()
            node = self.nodes[node_id]
            status = "unable-to-connect"
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(node["host"], node["port"]), 30)
                await asyncio.wait_for(reader.readuntil(b"]]>]]>"), 30)
                writer.write(HELLO)
                await writer.drain()
                self.writers.append(writer)
                status = "connected"
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                pass
            with self.lock:
                node["status"] = status
                if all(n["status"] == "connected" for n in self.nodes.values()):
                    self.all_connected_at = time.monotonic()

    def topology(self):
        with self.lock:
            nodes = [{"node-id": k, "netconf-node-topology:netconf-node": {
                "host": v["host"], "port": v["port"], "connection-status": v["status"]}}
                for k, v in self.nodes.items()]
        return {"network-topology:topology": [{"topology-id": "topology-netconf", "node": nodes}]}

    def counts(self):
        with self.lock:
            out = {"connected": 0, "connecting": 0, "unable-to-connect": 0}
            for n in self.nodes.values():
                out[n["status"]] += 1
            return out

    def stop(self):
        self.http.shutdown()
        self.http.server_close()

        def close_all():
            for w in self.writers:
                w.close()
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_soon(self.loop.stop)  # after the cancelled tasks have run their last step
        self.loop.call_soon_threadsafe(close_all)
        self.loop_thread.join(10)
        self.loop.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=18181)
    ap.add_argument("--concurrency", type=int, default=200)
    args = ap.parse_args()
    c = Controller(args.port, concurrency=args.concurrency)
    print("fake controller on 127.0.0.1:%d%s" % (args.port, TOPOLOGY_PATH), flush=True)
    try:
        while True:
            time.sleep(5)
            print(c.counts(), flush=True)
    except KeyboardInterrupt:
        c.stop()


if __name__ == "__main__":
    main()
