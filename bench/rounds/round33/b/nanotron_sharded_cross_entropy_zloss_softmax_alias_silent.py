# label: hazard silent no-twin
# why: with z-loss added to _ShardedCrossEntropy, backward still starts from `grad_input = softmax` (the tensor saved in ctx) and subtracts the one-hot target through the view `grad_2d[...] -= ...`; that edits the saved softmax in place, so the z-loss term `softmax * 2*coef*log_z` is computed from the already-shifted values and the logits get a wrong gradient (the commit cloned softmax first). no-twin: the write through `grad_2d` into `grad_input` is intended; only its aliasing of the saved softmax is the bug.
# source: https://github.com/huggingface/nanotron/commit/98e77626e7ee07f1da472b2ee837a42e2b36bf10
from typing import Optional

import torch

torch.manual_seed(0)


class dist:
    """Single-rank stand-in for nanotron.distributed (tensor-parallel group of size 1)."""

    class ReduceOp:
        MAX = "max"
        SUM = "sum"

    ProcessGroup = object

    @staticmethod
    def all_reduce(tensor, op=None, group=None):
        return tensor  # the only rank already holds the full value

    @staticmethod
    def get_rank(group=None):
        return 0


class _ShardedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        sharded_logits,  # (batch_size, length, sharded_hidden_size)
        target,  # (batch_size, length)
        group: dist.ProcessGroup,
        z_loss_coef: float = 0.0,  # Coefficient for z-loss regularization
    ):
        # Maximum value along last dimension across all GPUs.
        logits_max = torch.max(sharded_logits, dim=-1)[0]
        dist.all_reduce(logits_max, op=dist.ReduceOp.MAX, group=group)
        # Subtract the maximum value.
        sharded_logits = sharded_logits - logits_max.unsqueeze(dim=-1)

        # Get the shard's indices
        sharded_hidden_size = sharded_logits.shape[-1]
        rank = dist.get_rank(group)
        start_index = rank * sharded_hidden_size
        end_index = start_index + sharded_hidden_size

        # Create a mask of valid ids (1 means it needs to be masked).
        target_mask = (target < start_index) | (target >= end_index)
        masked_target = target.clone() - start_index
        masked_target[target_mask] = 0

        # Get predicted-logits = logits[target].
        logits_2d = sharded_logits.view(-1, sharded_hidden_size)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.shape[0], device=logits_2d.device)
        predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
        if predicted_logits_1d.is_contiguous():
            predicted_logits_1d = predicted_logits_1d.clone()
        else:
            predicted_logits_1d = predicted_logits_1d.contiguous()
        predicted_logits = predicted_logits_1d.view_as(target)
        predicted_logits[target_mask] = 0.0
        # All reduce is needed to get the chunks from other GPUs.
        dist.all_reduce(predicted_logits, op=dist.ReduceOp.SUM, group=group)

        # Sum of exponential of logits along vocab dimension across all GPUs.
        exp_logits = sharded_logits
        torch.exp(sharded_logits, out=exp_logits)
        sum_exp_logits = exp_logits.sum(dim=-1)
        dist.all_reduce(sum_exp_logits, op=dist.ReduceOp.SUM, group=group)

        # Loss = log(sum(exp(logits))) - predicted-logit.
        loss = torch.log(sum_exp_logits) - predicted_logits

        # Store the log(Z) for backward pass
        log_z = torch.log(sum_exp_logits)

        # Apply z-loss regularization if coefficient is non-zero
        if z_loss_coef > 0.0:
            # z_loss = z_loss_coef * log²(Z)
            z_loss = z_loss_coef * torch.square(log_z.clamp(min=-20.0, max=20.0))
            loss = loss + z_loss

        # Normalize and optionally smooth logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))

        # Store softmax, target-mask, masked-target and z_loss_coef for backward pass.
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d, log_z)
        ctx.z_loss_coef = z_loss_coef

        return loss.view_as(target)

    @staticmethod
    def backward(ctx, grad_output):
        # Retrieve tensors from the forward path.
        softmax, target_mask, masked_target_1d, log_z = ctx.saved_tensors
        z_loss_coef = ctx.z_loss_coef

        # All the inputs have softmax as their gradient.
        grad_input = softmax
        # For simplicity, work with the 2D gradient.
        sharded_hidden_size = softmax.size()[-1]
        grad_2d = grad_input.view(-1, sharded_hidden_size)

        # Add the gradient from matching classes.
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
        grad_2d[arange_1d, masked_target_1d] -= 1.0 - target_mask.view(-1).float()  # <-- IPL005, IPL002

        # If z-loss is applied, we need to add its gradient contribution
        if z_loss_coef > 0.0:
            # The gradient of z_loss with respect to logits is:
            # 2 * z_loss_coef * log(Z) * (1/Z) * exp(logits)
            # But exp(logits)/Z is just the softmax, which we already have
            z_loss_grad_scale = 2.0 * z_loss_coef * log_z

            # Add the z-loss gradient contribution
            z_loss_grad = softmax * z_loss_grad_scale.unsqueeze(-1)
            grad_input = grad_input + z_loss_grad

        # Finally elementwise multiplication with the output gradients.
        grad_input.mul_(grad_output.unsqueeze(dim=-1))

        return grad_input, None, None, None


def sharded_cross_entropy(
    sharded_logits,
    target,
    group: dist.ProcessGroup,
    dtype: torch.dtype = None,
    z_loss_coef: float = 0.0,
):
    """Helper function for the cross entropy."""
    if dtype is not None:
        # Cast input to specific dtype.
        sharded_logits = sharded_logits.to(dtype=dtype)
    return _ShardedCrossEntropy.apply(sharded_logits, target, group, z_loss_coef)


def main():
    lm_head = torch.nn.Linear(16, 32, bias=False)
    hidden = torch.randn(2, 5, 16) * 3.0
    target = torch.randint(0, 32, (2, 5))
    sharded_logits = lm_head(hidden)
    loss = sharded_cross_entropy(sharded_logits, target, group=None, dtype=torch.float32, z_loss_coef=0.1).mean()
    loss.backward()

    # reference: the same loss written with autograd-visible ops
    logits = lm_head(hidden).float()
    log_z = torch.logsumexp(logits - logits.max(dim=-1, keepdim=True)[0].detach(), dim=-1)  # nanotron's log(Z) of max-shifted logits
    ref = (torch.nn.functional.cross_entropy(logits.view(-1, 32), target.view(-1), reduction="none").view_as(target)
           + 0.1 * torch.square(log_z.clamp(min=-20.0, max=20.0))).mean()
    ref_grad = torch.autograd.grad(ref, lm_head.weight)[0]
    return loss.detach(), lm_head.weight.grad.clone(), ref_grad, (lm_head.weight.grad - ref_grad).abs().max()


loss, lm_head_grad, ref_grad, grad_err = main()
