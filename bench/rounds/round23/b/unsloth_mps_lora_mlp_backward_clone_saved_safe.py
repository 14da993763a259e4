# label: safe
# why: the fix passes clones of DW, e and g to the in-place swiglu backward helper, so the activations saved in ctx are never overwritten and a second backward over the retained graph unpacks intact tensors.
# source: https://github.com/unslothai/unsloth/commit/198146da96251897e1154394a4a8b6c1a625bf2f
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def swiglu_fg_kernel(e, g):
    return F.silu(e) * g


def swiglu_DWf_DW_dfg_kernel(DW, e, g):
    """Returns (h, df, de) by overwriting DW, e, g in place, like the fused kernel."""
    se = torch.sigmoid(e)
    f = se * e
    h = f * g
    df = DW * f
    dg = DW * g
    de = dg * se * (1.0 + e * (1.0 - se))
    DW.copy_(h)
    e.copy_(df)
    g.copy_(de)
    return DW, e, g


def mps_matmul_lora(X, W, A, B, s):
    out = torch.matmul(X, W.t())
    if A is not None:
        out = out + torch.matmul(torch.matmul(X, A.t()), B.t()) * s
    return out


class MPSLoRA_MLP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, gateW, gateA, gateB, gateS, upW, upA, upB, upS, downW, downA, downB, downS,
                _forward_function, _backward_function):
        e = mps_matmul_lora(X, gateW, gateA, gateB, gateS)
        g = mps_matmul_lora(X, upW, upA, upB, upS)
        h = _forward_function(e, g)
        i = mps_matmul_lora(h, downW, downA, downB, downS)
        ctx.save_for_backward(X, gateW, gateA, gateB, upW, upA, upB, downW, downA, downB, e, g, h)
        ctx.gateS, ctx.upS, ctx.downS = gateS, upS, downS
        ctx._backward_function = _backward_function
        return i

    @staticmethod
    def backward(ctx, dY):
        X, gateW, gateA, gateB, upW, upA, upB, downW, downA, downB, e, g, h = ctx.saved_tensors
        gateS, upS, downS = ctx.gateS, ctx.upS, ctx.downS
        batch, seq_len, hd = X.shape
        dY = dY.reshape(-1, dY.shape[-1])
        X = X.view(-1, X.shape[-1])
        e = e.view(-1, e.shape[-1])
        g = g.view(-1, g.shape[-1])

        DW = torch.matmul(dY, downW)
        DW = DW + (dY @ downB) @ downA * downS
        # _backward_function modifies tensors in place, so we pass copies to preserve
        # the original saved_tensors
        DW_clone = DW.clone()
        e_clone = e.clone()
        g_clone = g.clone()
        h_out, df, de = ctx._backward_function(DW_clone, e_clone, g_clone)

        d_downA = (h_out.t() @ (dY @ downB)).t() * downS
        d_downB = ((downA @ h_out.t()) @ dY).t() * downS
        d_upA = (X.t() @ (df @ upB)).t() * upS
        d_upB = ((upA @ X.t()) @ df).t() * upS
        d_gateA = (X.t() @ (de @ gateB)).t() * gateS
        d_gateB = ((gateA @ X.t()) @ de).t() * gateS

        dX = df @ upW + (df @ upB) @ upA * upS
        dX = dX + de @ gateW + (de @ gateB) @ gateA * gateS
        dX = dX.view(batch, seq_len, hd)
        return (dX, None, d_gateA, d_gateB, None, None, d_upA, d_upB, None,
                None, d_downA, d_downB, None, None, None)


def apply_lora_mlp_swiglu(X, mlp):
    return MPSLoRA_MLP.apply(X, *mlp["gate"], *mlp["up"], *mlp["down"],
                             swiglu_fg_kernel, swiglu_DWf_DW_dfg_kernel)


def main():
    hd, inter, r = 8, 16, 2
    def proj(i, o):
        return (torch.randn(o, i) * 0.2, (torch.randn(r, i) * 0.2).requires_grad_(),
                (torch.randn(o, r) * 0.2).requires_grad_(), 2.0)
    mlp = {"gate": proj(hd, inter), "up": proj(hd, inter), "down": proj(inter, hd)}
    X = torch.randn(2, 3, hd, requires_grad=True)
    out = apply_lora_mlp_swiglu(X, mlp)
    sft_loss = out.pow(2).mean()
    aux_loss = out.abs().mean()
    sft_loss.backward(retain_graph=True)
    aux_loss.backward()
    return out.detach(), X.grad.clone(), mlp["up"][1].grad.clone()


out, dX, d_upA = main()
