"""A notes server on the official Python SDK (FastMCP) whose create/delete pair declares
recovery: `create_note` is compensated by `delete_note`, bound to the id the create returned."""

import uuid

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

# The compensate carrier: FastMCP passes `meta` through as the tool's `_meta`.
COMPENSATE = "dev.chronomcp/compensate"

mcp = FastMCP("notes-python")
notes: dict[str, dict[str, str]] = {}


class Note(BaseModel):
    id: str
    title: str


class Created(BaseModel):
    # Required (no default), so the compensation's binding to `note.id` is provable.
    note: Note


class Deleted(BaseModel):
    deleted: str


class Listed(BaseModel):
    notes: list[Note]


@mcp.tool(
    title="Create note",
    description="Stores a note and returns it with its id.",
    annotations=ToolAnnotations(
        title="Create note",
        readOnlyHint=False,
        destructiveHint=False,
        idempotentHint=False,
        openWorldHint=False,
    ),
    meta={
        COMPENSATE: {
            "reversibility": "compensable",
            "compensation": {
                "toolName": "delete_note",
                "parameterMapping": {"id": "$.output.structuredContent.note.id"},
            },
            "sideEffectScope": ["storage"],
        }
    },
)
def create_note(title: str, body: str) -> Created:
    note_id = str(uuid.uuid4())
    notes[note_id] = {"id": note_id, "title": title, "body": body}
    return Created(note=Note(id=note_id, title=title))


@mcp.tool(
    title="Delete note",
    description="Deletes a note by id.",
    annotations=ToolAnnotations(
        title="Delete note",
        readOnlyHint=False,
        destructiveHint=True,
        idempotentHint=True,
        openWorldHint=False,
    ),
    meta={COMPENSATE: {"reversibility": "irreversible", "sideEffectScope": ["storage"]}},
)
def delete_note(id: str) -> Deleted:
    if notes.pop(id, None) is None:
        raise ToolError(f"no note {id}")
    return Deleted(deleted=id)


@mcp.tool(
    title="List notes",
    description="Lists every note.",
    annotations=ToolAnnotations(
        title="List notes",
        readOnlyHint=True,
        destructiveHint=False,
        idempotentHint=True,
        openWorldHint=False,
    ),
    meta={COMPENSATE: {"reversibility": "readonly"}},
)
def list_notes() -> Listed:
    return Listed(notes=[Note(id=n["id"], title=n["title"]) for n in notes.values()])


if __name__ == "__main__":
    mcp.run()
