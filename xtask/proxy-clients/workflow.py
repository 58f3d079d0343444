"""Drives `mcp-recovery proxy -- mcp-recovery-demo-server` with the official Python SDK: the
checkout workflow whose third step fails; the proxy must roll back the first two.

Usage: python workflow.py PROXY_BINARY DEMO_SERVER_BINARY JOURNAL
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def fail(message):
    print(f"FAIL (Python SDK): {message}", file=sys.stderr)
    sys.exit(1)


async def main(proxy, server, journal):
    parameters = StdioServerParameters(
        command=proxy,
        args=["proxy", "--journal", journal, "--on-failure", "rollback",
              "--ask", "charge_payment", "--approve-with", "grep -q charge_payment",
              "--deny", "get_secret*", "--", server],
    )
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def state():
                return (await session.call_tool("get_state", {})).structured_content

            listed = await session.list_tools()
            if not any(tool.name == "reserve_inventory" for tool in listed.tools):
                fail("tools/list lost tools")
            start = await state()
            reserved = await session.call_tool(
                "reserve_inventory", {"sku": "sku-gadget", "quantity": 1})
            if reserved.is_error:
                fail("reserve_inventory failed")
            charged = await session.call_tool(
                "charge_payment", {"customerId": "c-2", "amount": 9.5, "currency": "USD"})
            if charged.is_error:
                fail("charge_payment was not approved")
            if await state() == start:
                fail("the first two steps changed nothing")
            shipped = await session.call_tool("create_shipment", {
                "reservationId": reserved.structured_content["reservationId"],
                "address": "2 High St", "simulateFailure": True})
            if not shipped.is_error:
                fail("the third step was meant to fail")
            denied = await session.call_tool("get_secret_key", {})
            if not denied.is_error or "refused" not in json.dumps(
                    [c.model_dump() for c in denied.content]):
                fail("a denied call was not refused")
            end = await state()
            if end != start:
                fail(f"the state was not restored:\n start {start}\n end   {end}")
    print("ok (Python SDK): the failed workflow was rolled back and the state equals the start")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
