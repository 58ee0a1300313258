"""core.loops: one named daemon loop per process; broadcasts from a process with no server loop go
through it without blocking the publisher."""

import asyncio
import threading

from core.loops import daemon_loop


def test_one_loop_per_name_running_in_a_daemon_thread():
    loop = daemon_loop("test-loops")
    assert daemon_loop("test-loops") is loop and daemon_loop("test-loops-other") is not loop
    thread_name = asyncio.run_coroutine_threadsafe(_thread_name(), loop).result(timeout=5)
    assert thread_name == "test-loops-loop" and thread_name != threading.current_thread().name


def test_a_closed_loop_is_replaced():
    loop = daemon_loop("test-loops-closing")
    loop.call_soon_threadsafe(loop.stop)
    while loop.is_running():
        pass
    loop.close()
    fresh = daemon_loop("test-loops-closing")
    assert fresh is not loop and asyncio.run_coroutine_threadsafe(_thread_name(), fresh).result(timeout=5)


async def _thread_name() -> str:
    return threading.current_thread().name
