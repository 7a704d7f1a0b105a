"""The GPT cut over a ``(dp, pp, tp)`` device mesh: this rank's pipeline stage, its tensor-parallel shards, DDP.

One code path serves every factorisation of the world (``dp * pp * tp``
ranks, 1 included). ``ParallelGPT`` builds this rank's part in this order:

1. **The same start everywhere.** Every rank draws the whole ``GPT`` from
   the seed (``model.py``) and cuts its shards out of it, so the sharded
   parameters are exactly the single-process model's, whatever the mesh.
   (A real job would draw only its own shards; the full draw is what makes
   the factorisations comparable number for number.)
2. **Pipeline stage** ``pp_rank`` of ``pp`` (``GPTStage``): a contiguous run of
   blocks (the first stages take one more when they do not divide); stage 0
   also embeds the tokens and positions, the last stage also holds the
   final LayerNorm and the output head.
3. **Tensor parallelism** over the mesh's ``tp`` group, Megatron's layout:
   attention heads split over the ranks (``TensorParallelSelfAttention``),
   the MLP's hidden units split (``TensorParallelMLP``), the vocabulary
   split (``VocabParallelEmbedding``; the head's logits stay split and go
   straight into ``vocab_parallel_cross_entropy``). LayerNorms and the
   position embedding are replicated: their inputs and gradients are the
   same on every rank of the group, so they stay equal without messages.
4. **The tied head across stages** (Megatron's "embedding group"): the head
   reuses the token embedding's matrix. With one stage it is one
   ``Parameter``. With several, the first stage holds the (vocab-parallel)
   embedding and the last stage a copy of it; both start equal, and after
   each backward ``sync_tied_gradients`` sums their two gradients over the
   group {first stage, last stage} of the same ``(dp, tp)`` coordinate, so
   both get the gradient of the one shared matrix and the optimizers keep
   them equal.
5. **Data parallelism**: with ``dp > 1`` the stage module is wrapped in
   ``DistributedDataParallel`` over the mesh's ``dp`` group and handed to
   ``PipelineStage``, which averages gradients over the replicas once per
   step, in the stage's last backward.
6. **Schedule**: ``Schedule1F1B`` over the ``pp`` group (one stage per rank;
   with ``pp = 1`` it runs the microbatches one after the other), the loss
   ``vocab_parallel_cross_entropy`` over the ``tp`` group. It divides the
   gradients summed over microbatches by their number, so one step is the
   gradient of the loss averaged over the whole global batch.

``ParallelGPT.generate`` samples text through the same stages: a forward-only
schedule per new character, the last position's logit slices all-gathered
over ``tp`` on the last stage, one draw there, and the drawn id broadcast
back along the pipeline.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from gpt.model import GPT, GPTConfig
from minigrad import nn
from minigrad.grad_mode import no_grad
from minigrad.nn import functional as F
from minigrad_dist.pipelining import PipelineStage, Schedule1F1B
from minigrad_dist.tensor_parallel import (
    TensorParallelMLP,
    TensorParallelSelfAttention,
    VocabParallelEmbedding,
    copy_to_tensor_parallel_region,
    gather_from_tensor_parallel_region,
    vocab_parallel_cross_entropy,
)

__all__ = ["GPTStage", "ParallelBlock", "ParallelGPT", "check_factorisation", "stage_layers"]


def check_factorisation(config: GPTConfig, dp: int, pp: int, tp: int, world_size: int) -> None:
    """Raise a ValueError naming the problem and the fix when ``(dp, pp, tp)`` cannot run this model here.

    Checks: the factors are positive and multiply to ``world_size``; ``tp``
    divides the heads, the MLP width and the (padded) vocabulary; there are
    at least as many blocks as stages.
    """
    for name, value in (("dp", dp), ("pp", pp), ("tp", tp)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"--{name} must be a positive int, got {value!r}")
    if dp * pp * tp != world_size:
        raise ValueError(
            f"--dp {dp} --pp {pp} --tp {tp} needs dp*pp*tp = {dp * pp * tp} processes, but the world has "
            f"{world_size}; run `mpiexec -n {dp * pp * tp} python examples/gpt/train.py --dp {dp} --pp {pp} "
            f"--tp {tp}` or pick factors whose product is {world_size}"
        )
    if config.n_head % tp:
        raise ValueError(f"--tp {tp} must divide --n-head {config.n_head} (each rank computes whole heads)")
    if config.vocab_size % tp:
        raise ValueError(f"--tp {tp} must divide the padded vocabulary ({config.vocab_size}); use a tp that divides it")
    if config.n_layer < pp:
        raise ValueError(f"--pp {pp} needs at least {pp} blocks (one per stage), got --n-layer {config.n_layer}")


def stage_layers(n_layer: int, pp: int, stage: int) -> range:
    """The blocks of ``stage``: contiguous, the first ``n_layer % pp`` stages one block more."""
    base, extra = divmod(n_layer, pp)
    start = stage * base + min(stage, extra)
    return range(start, start + base + (stage < extra))


class ParallelBlock(nn.Module):
    """The tensor-parallel cut of one ``model.Block``: its heads and hidden units split over ``tp_group``.

    Shapes: ``(N, L, E)`` in and out, replicated over the group.
    """

    def __init__(self, block, tp_group):
        super().__init__()
        self.ln_1 = block.ln_1  # replicated: the full model is thrown away after the cut
        self.attn = TensorParallelSelfAttention.from_multihead_attention(block.attn, tp_group)
        self.ln_2 = block.ln_2
        self.mlp = TensorParallelMLP.from_linears(block.fc, block.act, block.proj, tp_group)

    def forward(self, x):
        """``x + attn(ln_1(x))``, then ``+ mlp(ln_2(.))``, as ``model.Block``."""
        x = x + self.attn(self.ln_1(x), is_causal=True)
        return x + self.mlp(self.ln_2(x))


class GPTStage(nn.Module):
    """One pipeline stage of the GPT, tensor-parallel over ``tp_group``.

    Args:
        full (GPT): the whole model to cut (step 1 of the module docstring).
        layers (range): the blocks this stage runs.
        is_first (bool): embed token ids (the stage's input is ``(N, L)`` int64).
        is_last (bool): end with the final LayerNorm and the tied head (the output
            is ``(N, L, vocab_size / tp)``, this rank's slice of the logits).
        tp_group (ProcessGroup): the tensor-parallel group.

    Attributes:
        wte (VocabParallelEmbedding), wpe (Embedding): on the first stage.
        head_weight (Parameter): on a last stage that is not also the first,
            the copy of ``wte``'s shard that the head uses (step 4).

    Shapes: activations between stages are ``(N, L, n_embd)``.
    """

    def __init__(self, full: GPT, layers: range, is_first: bool, is_last: bool, tp_group):
        super().__init__()
        self.is_first, self.is_last, self.tp_group = is_first, is_last, tp_group
        self.vocab_size = full.config.vocab_size
        self.block_size = full.config.block_size
        if is_first:
            self.wte = VocabParallelEmbedding.from_embedding(full.wte, tp_group)
            self.wpe = full.wpe
        self.blocks = nn.ModuleList([ParallelBlock(full.blocks[i], tp_group) for i in layers])
        if is_last:
            self.ln_f = full.ln_f
            if not is_first:
                shard = VocabParallelEmbedding.from_embedding(full.wte, tp_group).weight
                with no_grad():
                    self.head_weight = nn.Parameter(shard.detach().clone())

    def tied_weight(self):
        """The embedding shard on the first stage, its copy on a last stage; None in between."""
        if self.is_first:
            return self.wte.weight
        return self.head_weight if self.is_last else None

    def forward(self, x):
        """Token ids ``(N, L)`` (first stage) or activations ``(N, L, E)``; activations or logit slices out."""
        if self.is_first:
            x = self.wte(x) + self.wpe(mg.arange(x.shape[1]))
        for block in self.blocks:
            x = block(x)
        if not self.is_last:
            return x
        h = copy_to_tensor_parallel_region(self.ln_f(x), self.tp_group)  # f: the head is column-parallel
        return F.linear(h, self.tied_weight())

    def loss(self, logits, target):
        """Mean next-character cross-entropy of this microbatch, from the vocab-split logits (the last stage)."""
        return vocab_parallel_cross_entropy(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1), process_group=self.tp_group
        )


class ParallelGPT:
    """This rank's part of the GPT on a ``(dp, pp, tp)`` mesh, and one training step over it.

    Args:
        config (GPTConfig): the model.
        mesh (DeviceMesh): a 3-D mesh named ``("dp", "pp", "tp")``.
        seed (int): the full model's seed (the same on every rank).
        n_microbatches (int): microbatches per step for the pipeline schedule.

    Attributes:
        module (GPTStage): this rank's stage; ``stage`` (PipelineStage);
        ``schedule`` (Schedule1F1B); ``ddp`` (the DDP wrapper, None with ``dp = 1``).

    Raises:
        ValueError: the mesh does not fit the model (``check_factorisation``).

    Warning:
        The constructor is collective over the world (the embedding groups are
        made with ``new_group``) and over the ``dp`` group (DDP); so is ``close``.
    """

    def __init__(self, config: GPTConfig, mesh, seed: int, n_microbatches: int):
        dp, pp, tp = mesh.shape
        check_factorisation(config, dp, pp, tp, mesh.size())
        self.mesh = mesh
        self.dp_rank, self.pp_rank, self.tp_rank = mesh.get_coordinate()
        self.pp = pp
        tp_group = mesh["tp"].get_group()
        full = GPT.from_config(config, seed)
        layers = stage_layers(config.n_layer, pp, self.pp_rank)
        self.module = GPTStage(full, layers, self.pp_rank == 0, self.pp_rank == pp - 1, tp_group)
        self.ddp = dist.DistributedDataParallel(self.module, process_group=mesh["dp"].get_group()) if dp > 1 else None
        self.stage = PipelineStage(self.ddp or self.module, self.pp_rank, pp, group=mesh["pp"].get_group())
        self.schedule = Schedule1F1B(self.stage, n_microbatches, loss_fn=self.module.loss)
        self.embedding_group = self._embedding_group()

    @property
    def is_first(self) -> bool:
        """Whether this rank runs the first stage (it needs the inputs)."""
        return self.module.is_first

    @property
    def is_last(self) -> bool:
        """Whether this rank runs the last stage (it needs the targets and computes the loss)."""
        return self.module.is_last

    def parameters(self):
        """This rank's parameters (its stage's shards), for the optimizer."""
        return self.module.parameters()

    def _embedding_group(self):
        """Step 4: the group {first stage, last stage} of this rank's (dp, tp) coordinate; None with one stage."""
        if self.pp == 1:
            return None
        layout = self.mesh.mesh.numpy()
        mine = None
        for d in range(layout.shape[0]):  # every rank makes every group, in the same order
            for t in range(layout.shape[2]):
                ranks = [int(layout[d, 0, t]), int(layout[d, -1, t])]
                group = dist.new_group(ranks)
                if dist.get_rank() in ranks:
                    mine = group
        return mine

    def train_step(self, inputs, targets):
        """Forward and backward of this replica's batch; leaves the gradients in ``.grad`` (zero them first).

        Args:
            inputs, targets: this replica's ``(B / dp, L)`` int64 Tensors (only
                the first stage reads ``inputs``, only the last ``targets``).

        Returns:
            float | None: on the last stage, this replica's mean loss; None elsewhere.
        """
        losses = []
        args = (inputs,) if self.is_first else ()
        self.schedule.step(*args, target=targets if self.is_last else None, losses=losses, return_outputs=False)
        self.sync_tied_gradients()
        if not self.is_last:
            return None
        return float(sum(loss.item() for loss in losses) / len(losses))

    def sync_tied_gradients(self) -> None:
        """Step 4: sum the tied matrix's gradient over the embedding group (first and last stage)."""
        if self.embedding_group is None:
            return
        weight = self.module.tied_weight()
        if weight.grad is None:
            weight.grad = mg.zeros_like(weight)
        dist.all_reduce(weight.grad, group=self.embedding_group)

    def generate(self, prompt, new_tokens: int, allowed: int, temperature: float = 0.8, seed: int = 0):
        """Continue ``prompt`` by ``new_tokens`` ids drawn from the model's softmax; the ids on every rank.

        Collective over the pipeline and tensor-parallel groups (every rank
        calls it; each data-parallel replica draws the same text on its own).

        Args:
            prompt (numpy.ndarray): token ids to start from (at least one).
            new_tokens (int): how many ids to draw.
            allowed (int): draw only ids below this (the padded ids never occur in the corpus).
            temperature (float): divides the logits before the softmax.
            seed (int): the draws' generator seed (the same on every rank).

        Returns:
            numpy.ndarray: ``prompt`` followed by the drawn ids (int64).
        """
        rng = np.random.default_rng(seed)
        ids = [int(i) for i in prompt]
        forward = Schedule1F1B(self.stage, 1)  # no loss_fn: forwards only
        tp_group, pp_group = self.mesh["tp"].get_group(), self.mesh["pp"].get_group()
        context_size = self.module.block_size
        with mg.no_grad():
            for _ in range(new_tokens):
                context = mg.tensor(np.array([ids[-context_size:]], dtype=np.int64))
                logits = forward.step(*((context,) if self.is_first else ()))
                drawn = np.zeros(1, dtype=np.int64)
                if self.is_last:  # every tp rank gathers the same logits and draws the same id
                    row = gather_from_tensor_parallel_region(logits[0, -1], tp_group).numpy().astype(np.float64)
                    row = row[:allowed] / temperature
                    probs = np.exp(row - row.max())
                    drawn[0] = rng.choice(allowed, p=probs / probs.sum())
                dist.broadcast(drawn, src=pp_group.world_ranks[-1], group=pp_group)
                ids.append(int(drawn[0]))
        return np.array(ids, dtype=np.int64)

    def close(self) -> None:
        """Free DDP's and the embedding group's communicators (collective, as the constructor)."""
        if self.ddp is not None:
            self.ddp.close()
        if self.embedding_group is not None:
            dist.destroy_process_group(self.embedding_group)
