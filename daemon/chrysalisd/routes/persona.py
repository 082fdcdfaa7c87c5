"""The agent's persona (read, replace, patch) and its skills."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from chrysalis.core import errors
from chrysalis.core.models import Persona, Skill

from ..bodies import PersonaIn, PersonaPatch, SkillIn
from .common import D, PathId, json_answer, json_list

router = APIRouter()


@router.get("/v1/persona", response_model=Persona, tags=["persona"])
def get_persona(d: D) -> Response:
    """The agent's persona."""
    return json_answer(d.memory.get_persona())


@router.put("/v1/persona", response_model=Persona, tags=["persona"])
def put_persona(d: D, body: PersonaIn) -> Response:
    """Replace the persona (fields left out take their defaults)."""
    return json_answer(d.memory.put_persona(body))


@router.patch("/v1/persona", response_model=Persona, tags=["persona"], responses={400: {}})
def update_persona(d: D, body: PersonaPatch) -> Response:
    """Change only the persona fields given.

    Change only the fields given, in one write, so concurrent changes to other fields
    (here or on other laptops) are kept; an empty object changes nothing."""
    fields = body.model_dump(exclude_unset=True)
    if not fields:
        return json_answer(d.memory.get_persona())
    return json_answer(d.memory.update_persona(**fields))


@router.get("/v1/skills", response_model=list[Skill], tags=["skills"])
def list_skills(d: D) -> Response:
    """Every skill."""
    return json_list(d.memory.list_skills())


@router.get("/v1/skills/{id}", response_model=Skill, tags=["skills"], responses={404: {}})
def get_skill(d: D, id: PathId) -> Response:
    """One skill by its id."""
    return json_answer(d.memory.get_skill(id))


@router.put("/v1/skills/{id}", response_model=Skill, tags=["skills"])
def put_skill(d: D, id: PathId, body: SkillIn) -> Response:
    """Add or replace the skill ``id``."""
    if body.id is not None and body.id != id:
        raise errors.InvalidInput(f"body id {body.id!r} differs from the path's {id!r}")
    return json_answer(d.memory.put_skill({**body.model_dump(), "id": id}))


@router.delete("/v1/skills/{id}", status_code=204, tags=["skills"], responses={404: {}})
def delete_skill(d: D, id: PathId) -> Response:
    """Delete a skill by its id."""
    d.memory.delete_skill(id)
    return Response(status_code=204)
