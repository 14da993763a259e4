# label: hazard raises
# why: with inplace=True LoRA_MLP.backward computes the input gradient with torch.matmul(..., out=X), writing it into the saved activation X, so a second backward over the retained graph (e.g. a second loss on the same forward) unpacks a saved tensor that was overwritten.
# source: https://github.com/axolotl-ai-cloud/axolotl/commit/c70026b32bec538af199ebfd74d7fcaf7e326bea
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def matmul_lora(X, W, A, B, s):
    out = X @ W.t()
    if A is not None:
        out = out + (X @ A.t()) @ B.t() * s
    return out


def swiglu_forward(gate, up):
    return F.silu(gate) * up


def swiglu_backward(grad_output, gate, up):
    sig = torch.sigmoid(gate)
    silu_gate = gate * sig
    h = silu_gate * up
    grad_up = grad_output * silu_gate
    grad_gate = grad_output * up * (sig + gate * sig * (1 - sig))
    return h, grad_gate, grad_up


class LoRA_MLP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, gate_weight, gate_A, gate_B, gate_scale, up_weight, up_A, up_B, up_scale,
                down_weight, down_A, down_B, down_scale, activation_fn, activation_fn_backward, inplace=True):
        gate = matmul_lora(X, gate_weight, gate_A, gate_B, gate_scale)
        up = matmul_lora(X, up_weight, up_A, up_B, up_scale)
        hidden = activation_fn(gate, up)
        output = matmul_lora(hidden, down_weight, down_A, down_B, down_scale)
        ctx.save_for_backward(X, gate, up, gate_A, gate_B, up_A, up_B, down_A, down_B)
        ctx.scales = (gate_scale, up_scale, down_scale)
        ctx.weights = (gate_weight, up_weight, down_weight)
        ctx.activation_fn_backward = activation_fn_backward
        ctx.inplace = inplace
        return output

    @staticmethod
    def backward(ctx, grad_output):
        gate_scale, up_scale, down_scale = ctx.scales
        gate_weight, up_weight, down_weight = ctx.weights
        X, gate, up, gate_A, gate_B, up_A, up_B, down_A, down_B = ctx.saved_tensors
        batch, seq_len, hd = X.shape
        grad_output = grad_output.reshape(-1, grad_output.shape[-1])
        X = X.view(-1, hd)
        gate = gate.view(-1, gate.shape[-1])
        up = up.view(-1, up.shape[-1])

        grad_down = grad_output @ down_weight + (grad_output @ down_B) @ down_A * down_scale
        h, grad_gate, grad_up = ctx.activation_fn_backward(grad_down, gate, up)

        grad_B_down = grad_output @ down_B
        d_down_A = (h.t() @ grad_B_down).t() * down_scale
        d_down_B = ((down_A @ h.t()) @ grad_output).t() * down_scale
        grad_B_up = grad_up @ up_B
        d_up_A = (X.t() @ grad_B_up).t() * up_scale
        d_up_B = ((up_A @ X.t()) @ grad_up).t() * up_scale
        grad_B_gate = grad_gate @ gate_B
        d_gate_A = (X.t() @ grad_B_gate).t() * gate_scale
        d_gate_B = ((gate_A @ X.t()) @ grad_gate).t() * gate_scale

        if ctx.inplace:
            dX = torch.matmul(grad_up, up_weight, out=X)  # <-- IPL005
        else:
            dX = torch.matmul(grad_up, up_weight)
        dX.addmm_(grad_gate, gate_weight)
        dX.addmm_(grad_B_up, up_A, alpha=up_scale)
        dX.addmm_(grad_B_gate, gate_A, alpha=gate_scale)
        dX = dX.view(batch, seq_len, hd)
        return (dX, None, d_gate_A, d_gate_B, None, None, d_up_A, d_up_B, None,
                None, d_down_A, d_down_B, None, None, None, None)


def apply_lora_mlp_swiglu(X, gate, up, down, inplace=True):
    return LoRA_MLP.apply(X, *gate, *up, *down, swiglu_forward, swiglu_backward, inplace)


def main():
    hd, inter, r = 8, 16, 2

    def proj(i, o):
        return (torch.randn(o, i) * 0.2, (torch.randn(r, i) * 0.2).requires_grad_(),
                (torch.randn(o, r) * 0.2).requires_grad_(), 2.0)

    gate, up, down = proj(hd, inter), proj(hd, inter), proj(inter, hd)
    embed = torch.nn.Embedding(32, hd)
    X = embed(torch.randint(0, 32, (2, 3)))
    out = apply_lora_mlp_swiglu(X, gate, up, down)
    chosen_loss = out[0].pow(2).mean()
    rejected_loss = out[1].pow(2).mean()
    chosen_loss.backward(retain_graph=True)
    rejected_loss.backward()
    return out.detach(), embed.weight.grad.clone(), up[1].grad.clone()


out, embed_grad, up_A_grad = main()
