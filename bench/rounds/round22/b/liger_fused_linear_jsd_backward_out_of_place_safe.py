# label: safe no-twin
# why: after the fix fused_linear_jsd_backward scales the saved grad_input/grad_weight out of place (grad_input = grad_input * grad_output), so the tensors saved by forward stay at their version and a second backward through the retained graph works; the in-place copy_/add_/slice writes in forward only fill fresh scratch buffers. (no-twin: jsd_kernel deliberately writes its results into the caller's loss_1d and log_prob_s buffers, as the Triton/cuTile kernel does through its output pointers)
# source: https://github.com/linkedin/Liger-Kernel/commit/42aef1da258fd645e15b9059692a1f0daa855ca3 ("fix: use out-of-place mul in cutile fused_linear_jsd backward"; pre-fix src/liger_kernel/ops/cutile/ops/fused_linear_jsd.py)
from typing import Optional

import torch

torch.manual_seed(0)


def _next_power_of_2(n):
    return 1 << (n - 1).bit_length()


def jsd_kernel(X, Y, loss, dX, beta, inv_n):
    # stands in for jsd_kernel_ct: writes the per-element loss and d loss / d X (into X's storage)
    Q, P = X.exp(), Y.exp()
    M = beta * P + (1 - beta) * Q
    log_M = M.log()
    loss.copy_((beta * P * (Y - log_M) + (1 - beta) * Q * (X - log_M)) * inv_n)
    dX.copy_((1 - beta) * Q * (X - log_M) * inv_n)


def fused_linear_jsd_forward(student_input, student_weight, teacher_input, teacher_weight, shift_labels, jsd_beta, ignore_index, has_label, temperature):
    BT, H = student_input.shape
    V = student_weight.shape[0]
    inc_factor = (V + H - 1) // H
    chunk_size = _next_power_of_2((BT + inc_factor - 1) // inc_factor)
    num_chunks = (BT + chunk_size - 1) // chunk_size

    grad_weight = torch.zeros_like(student_weight) if student_weight.requires_grad else None
    grad_input = torch.zeros_like(student_input)
    loss_1d = torch.zeros((BT, V), dtype=torch.float32)
    n_non_ignore = (shift_labels != ignore_index).sum().item() if has_label else BT
    inv_n_non_ignore = 1.0 / max(n_non_ignore, 1)

    for chunk_id in range(num_chunks):
        start_idx = chunk_id * chunk_size
        end_idx = min((chunk_id + 1) * chunk_size, BT)
        student_input_chunk = student_input[start_idx:end_idx]
        teacher_input_chunk = teacher_input[start_idx:end_idx]
        student_logits_chunk = (student_input_chunk @ student_weight.t()).to(torch.float32) / temperature
        teacher_logits_chunk = (teacher_input_chunk @ teacher_weight.t()).to(torch.float32) / temperature
        loss_chunk = loss_1d[start_idx:end_idx]
        log_prob_s_chunk = torch.log_softmax(student_logits_chunk, dim=-1).contiguous()
        log_prob_t_chunk = torch.log_softmax(teacher_logits_chunk, dim=-1).contiguous()
        jsd_kernel(log_prob_s_chunk, log_prob_t_chunk, loss_chunk, log_prob_s_chunk, jsd_beta, inv_n_non_ignore)
        student_logits_chunk = (
            log_prob_s_chunk
            - torch.softmax(student_logits_chunk, dim=-1) * log_prob_s_chunk.sum(dim=-1, keepdim=True).broadcast_to(log_prob_s_chunk.shape)
        ) / temperature
        grad_input[start_idx:end_idx] = student_logits_chunk @ student_weight
        if grad_weight is not None:
            grad_weight.add_(student_logits_chunk.t() @ student_input_chunk)

    loss = torch.sum(loss_1d)
    return loss, grad_input, grad_weight


def fused_linear_jsd_backward(grad_output, grad_input, grad_weight):
    if torch.ne(grad_output, torch.tensor(1.0, device=grad_output.device)):
        # Use out-of-place mul to avoid PyTorch version-tracking issues when
        # backward is called with retain_graph=True.
        grad_input = grad_input * grad_output
        if grad_weight is not None:
            grad_weight = grad_weight * grad_output
    return grad_input, grad_weight


class LigerFusedLinearJSDFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, student_input, student_weight, teacher_input, teacher_weight, shift_labels: Optional[torch.Tensor] = None,
                jsd_beta: float = 0.5, ignore_index: int = -100, temperature: float = 1.0):
        has_label = shift_labels is not None
        loss, grad_input, grad_weight = fused_linear_jsd_forward(
            student_input, student_weight, teacher_input, teacher_weight, shift_labels, jsd_beta, ignore_index, has_label, temperature
        )
        ctx.save_for_backward(grad_input.detach(), grad_weight.detach() if grad_weight is not None else None)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (grad_input, grad_weight) = ctx.saved_tensors
        grad_input, grad_weight = fused_linear_jsd_backward(grad_output, grad_input, grad_weight)
        return (grad_input, grad_weight, None, None, None, None, None, None)


def main():
    BT, H, V = 8, 16, 32
    student_hidden = torch.randn(BT, H, requires_grad=True)
    student_lm_head = torch.nn.Linear(H, V, bias=False)
    teacher_hidden = torch.randn(BT, H)
    teacher_lm_head = torch.nn.Linear(H, V, bias=False)
    jsd_loss = LigerFusedLinearJSDFunction.apply(student_hidden, student_lm_head.weight, teacher_hidden, teacher_lm_head.weight.detach())
    loss = 0.5 * jsd_loss
    loss.backward(retain_graph=True)
    (probe,) = torch.autograd.grad(loss, student_hidden)
    return loss.detach(), student_lm_head.weight.grad, probe


loss, weight_grad, probe = main()
