# Jupyter Server config fragment: turn off Nagle's algorithm on kernel WebSockets (append to
# jupyter_server_config.py, or load it with --config). A stock server leaves TCP_NODELAY off on the
# WebSocket it serves a kernel on, so when a kernel sends several messages in a row (an execute's
# busy, output, reply and idle; a burst of comm messages) the later ones wait for the client's
# delayed ACK: about 40 ms per round trip on Linux.
from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

_albedo_open = KernelWebsocketHandler.open


async def _open_without_nagle(self, *args, **kwargs):
    self.set_nodelay(True)
    return await _albedo_open(self, *args, **kwargs)


KernelWebsocketHandler.open = _open_without_nagle
