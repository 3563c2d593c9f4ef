"""GraphRAFT over HTTP (FastAPI): `POST /ask`, `GET /schema`, `GET /health`, OpenAPI docs at `/docs`.

The pipeline (models, adapters, the store) is built once, before the app serves. One worker
thread answers the questions (``batching.py``): those that arrive together, within a short
window or while a batch runs, are answered together, L1 searching them in shared forward calls.
Every request has a deadline that also counts its wait. At most ``max_queued`` questions wait
or run at once: one more is answered 503 with ``Retry-After`` at once, so waiting questions
never take every worker thread;
``/health`` runs on threads of its own and answers while questions queue. A user's mistake
comes back as ``{"error": "<one line>"}`` with the status that fits; every question gets one
log line. Opt-in, the answered questions' text is kept for self-training (``question_log.py``)."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from graphraft.deadline import Deadline
from graphraft.errors import (
    BusyError,
    DatabaseUnavailableError,
    DeadlineExceededError,
    GraphDataLostError,
    GraphNotFoundError,
    GraphRAFTError,
    InvalidInputError,
    QueryTimeoutError,
    UnauthorizedError,
)
from graphraft.graph.schema import GraphSchema
from graphraft.inference.pipeline import Answer, GraphRAFT
from graphraft.serving.batching import QuestionBatcher
from graphraft.serving.question_log import QuestionLog

logger = logging.getLogger(__name__)

# the HTTP status for each kind of GraphRAFT error (the first match wins; the rest are 400)
STATUS = (
    (InvalidInputError, 400),
    (GraphNotFoundError, 404),
    (QueryTimeoutError, 504),  # DeadlineExceededError included
    (GraphDataLostError, 503),
    (DatabaseUnavailableError, 503),
    (BusyError, 503),
    (UnauthorizedError, 401),
)


#: seconds a client is told to wait when the queue is full
RETRY_AFTER_S = 5
#: the headers an error's status calls for
HEADERS = ((BusyError, {"Retry-After": str(RETRY_AFTER_S)}), (UnauthorizedError, {"WWW-Authenticate": "Bearer"}))


class AskRequest(BaseModel):
    question: str = Field(description="The question, e.g. 'who directed [Black Snake Moan]'.")
    beams: int | None = Field(None, ge=1, le=50, description="Queries L1 writes (default: the server's).")
    max_hops: int | None = Field(None, ge=1, le=3, description="Longest candidate pattern (default: the server's).")
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="This request's deadline in seconds, waiting included (default: the server's; "
        "capped at its GRAPHRAFT_MAX_ASK_TIMEOUT_S).",
    )


class ErrorBody(BaseModel):
    error: str = Field(description="What went wrong, on one line.")


def error_responses(*codes: int) -> dict:
    """The error statuses a route may answer, for the OpenAPI document."""
    meaning = {
        400: "An empty or oversized question, or one that asks for too much",
        401: "No bearer token, or the wrong one (when the server has an API key)",
        404: "The graph does not exist",
        503: "The database is unreachable or stalled, or the queue is full (Retry-After)",
        504: "Past the request's deadline",
    }
    return {code: {"model": ErrorBody, "description": meaning[code]} for code in codes}


class Health(BaseModel):
    status: str  # "ok" or "unavailable"
    database: str  # "reachable", or why not
    graph: str
    models: str  # what answers: base model and adapters
    nodes: int | None = None


def status_of(exc: GraphRAFTError) -> int:
    return next((code for kind, code in STATUS if isinstance(exc, kind)), 400)


def create_app(
    engine: GraphRAFT, timeout_s: float | None = None, api_key: str | None = None, log_questions: Path | None = None
) -> FastAPI:
    """An app around a built pipeline. ``timeout_s``: the default deadline of a request
    (default: the engine's settings.ask_timeout_s). ``api_key``: the bearer token `/ask` and
    `/schema` require (`/health` stays open for load balancers and orchestrators).
    ``log_questions``: a text file each answered question is appended to (``question_log.py``)."""
    bearer = HTTPBearer(auto_error=False)
    question_log = QuestionLog(log_questions) if log_questions is not None else None

    def authorized(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if api_key is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not secrets.compare_digest(given.encode(), api_key.encode()):
            raise UnauthorizedError("a bearer token is required (Authorization: Bearer <the server's API key>)")

    max_timeout = engine.settings.max_ask_timeout_s
    default_timeout = min(timeout_s or engine.settings.ask_timeout_s, max_timeout)
    settings = engine.settings
    batcher = QuestionBatcher(engine, settings.batch_window_ms / 1000, settings.max_batch)
    queued = threading.BoundedSemaphore(engine.settings.max_queued)  # questions waiting or running
    health_threads = anyio.CapacityLimiter(2)  # not the pool questions wait in
    graph = getattr(engine.store, "graph_name", engine.store.description)
    adapters = (("L1", engine.settings.l1_adapter), ("L2", engine.settings.l2_adapter))
    models = ", ".join([f"base {engine.settings.base_model}"] + [f"{task} {path}" for task, path in adapters if path])

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        batcher.close()
        if question_log is not None:
            question_log.close()

    app = FastAPI(
        lifespan=lifespan,
        title="GraphRAFT",
        summary="Answers questions over a knowledge graph with grounded, read-only Cypher.",
        version="0.1.0",
    )

    app.state.batcher = batcher

    @app.exception_handler(GraphRAFTError)
    def graphraft_error(request: Request, exc: GraphRAFTError) -> JSONResponse:
        message = " ".join(str(exc).split())
        logger.info("%s %s -> %d: %s", request.method, request.url.path, status_of(exc), message)
        headers = next((h for kind, h in HEADERS if isinstance(exc, kind)), None)
        return JSONResponse({"error": message}, status_code=status_of(exc), headers=headers)

    @app.post(
        "/ask",
        response_model=Answer,
        dependencies=[Depends(authorized)],
        responses=error_responses(400, 401, 404, 503, 504),
    )
    def ask(request: AskRequest) -> Answer:
        """Answer a question: the answers, the Cypher that found them, the evidence and timings."""
        started = time.perf_counter()
        if not request.question.strip():
            raise InvalidInputError("the question is empty")
        if not queued.acquire(blocking=False):
            raise BusyError(
                f"{engine.settings.max_queued} questions are already waiting or running "
                "(GRAPHRAFT_MAX_QUEUED); try again shortly"
            )
        try:
            return _answer(request, started)
        finally:
            queued.release()

    def _answer(request: AskRequest, started: float) -> Answer:
        # a client may ask for less time than the server's default, or more up to its cap
        deadline = Deadline(min(request.timeout_s or default_timeout, max_timeout), "answering the question")
        future = batcher.submit(request.question, deadline, request.beams, request.max_hops)
        try:
            # the worker ends a question at its deadline; a second more for it to say where
            answer = future.result(timeout=max(0.0, deadline.remaining()) + 1.0)
        except FutureTimeout:
            future.cancel()
            raise DeadlineExceededError(
                f"answering the question took longer than its {deadline.seconds:g}s limit "
                "(reached while waiting for the model: other questions ran)"
            ) from None
        logger.info(
            "ask %r -> %d answers, %d queries in %.2fs%s",
            request.question,
            len(answer.answers),
            len(answer.queries),
            time.perf_counter() - started,
            f" ({answer.message})" if answer.message else "",
        )
        if question_log is not None:
            question_log.add(request.question)
        return answer

    @app.get(
        "/schema",
        response_model=GraphSchema,
        dependencies=[Depends(authorized)],
        responses=error_responses(401, 404, 503, 504),
    )
    def schema() -> GraphSchema:
        """Labels, relationship types and (label)-[type]->(label) patterns with counts."""
        return engine.store.schema()

    @app.get(
        "/health",
        response_model=Health,
        responses={503: {"model": Health, "description": "The database does not answer"}},
    )
    async def health() -> JSONResponse:
        """Whether the database answers and which models are loaded (503 when the database does not)."""
        try:
            nodes = await anyio.to_thread.run_sync(engine.store.count_nodes, limiter=health_threads)
        except GraphRAFTError as exc:
            body = Health(status="unavailable", database=" ".join(str(exc).split()), graph=graph, models=models)
            return JSONResponse(body.model_dump(), status_code=503)
        return JSONResponse(
            Health(status="ok", database="reachable", graph=graph, models=models, nodes=nodes).model_dump()
        )

    return app
