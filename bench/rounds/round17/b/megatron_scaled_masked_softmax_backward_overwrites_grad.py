# label: hazard silent
# why: the fused softmax backward writes the input gradient into the incoming output_grads buffer in place, so the caller's grad tensor passed to backward() is clobbered and the reference check silently uses the wrong gradient.
# source: https://github.com/NVIDIA/Megatron-LM/commit/76db958327475bfa4a290ec5d782f8213cdb67e9
import torch

torch.manual_seed(0)


class scaled_masked_softmax_cuda:
    """CPU stand-in for the fused kernel module, with the kernel's in-place backward."""

    @staticmethod
    def forward(inputs, mask, scale):
        scores = (inputs * scale).masked_fill(mask, -10000.0)
        return torch.softmax(scores, dim=-1)

    @staticmethod
    def backward(output_grads, softmax_results, scale):
        dot = (output_grads * softmax_results).sum(dim=-1, keepdim=True)
        output_grads.sub_(dot).mul_(softmax_results).mul_(scale)  # <-- IPL005: the backward result is written into grad_output in place
        return output_grads


class ScaledMaskedSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, mask, scale):
        scale_t = torch.tensor([scale])
        softmax_results = scaled_masked_softmax_cuda.forward(inputs, mask, scale_t[0])
        ctx.save_for_backward(softmax_results, scale_t)
        return softmax_results

    @staticmethod
    def backward(ctx, output_grads):
        softmax_results, scale_t = ctx.saved_tensors
        input_grads = scaled_masked_softmax_cuda.backward(output_grads, softmax_results, scale_t[0])
        return input_grads, None, None


def attention_mask_func(attention_scores, attention_mask):
    attention_scores.masked_fill_(attention_mask, -10000.0)
    return attention_scores


def forward_torch_softmax(input, mask, scale):
    input = input * scale
    mask_output = attention_mask_func(input, mask) if mask is not None else input
    probs = torch.nn.Softmax(dim=-1)(mask_output)
    return probs


batch, attn, qlen, klen = 2, 2, 4, 8
scale = 0.5
inputs = torch.normal(0, 2, (batch, attn, qlen, klen)).requires_grad_(True)
backward = torch.rand(batch, attn, qlen, klen)
masks = torch.randint(0, 2, (batch, 1, qlen, klen), dtype=torch.bool)
softmax_results = ScaledMaskedSoftmax.apply(inputs, masks, scale)
softmax_results.backward(backward)
back_grad = inputs.grad.clone()

inputs_ref = inputs.detach().clone().requires_grad_(True)
softmax_results_torch = forward_torch_softmax(inputs_ref, masks, scale)
softmax_results_torch.backward(backward)
error = (back_grad - inputs_ref.grad).abs().max()
