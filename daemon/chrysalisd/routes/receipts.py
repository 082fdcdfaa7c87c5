"""Forget receipts: where a forgotten bead's content is gone, and where it may remain."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from chrysalis.forget.receipt import ForgetReceipt

from .common import D, PathId, json_answer

router = APIRouter()


@router.get(
    "/v1/forget/{id}",
    response_model=ForgetReceipt,
    tags=["beads"],
    responses={404: {}, 409: {}},
)
def receipt(d: D, id: PathId) -> Response:
    """Where a forgotten bead's content is gone, and where it may remain.

    The forget receipt of bead ``id``: each place (this replica's files, every other
    replica, the remote's segments, snapshots and blobs, Zep) is ``gone``, ``pending`` (who
    must act), ``marked``, ``in use`` (a live bead has the same bytes) or ``unknown``.
    ``clean``: every place is gone; ``settled``: none is pending. 404 for a bead never seen
    here, 409 for a live one."""
    return json_answer(d.forget_receipt(id))
