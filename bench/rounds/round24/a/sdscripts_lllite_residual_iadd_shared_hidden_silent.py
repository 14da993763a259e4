# label: hazard silent
# why: LLLiteModule.forward adds its residual into x with x += cx, but for attn1 the same hidden_states tensor is passed to to_q, to_k and to_v, so the patched to_k/to_v see a hidden state already shifted by the to_q (and to_k) residuals.
# source: https://github.com/kohya-ss/sd-scripts/commit/0646112010acaea0d2f3f3235472e05f013e9b18
import torch
import torch.nn as nn

torch.manual_seed(0)


class CrossAttention(nn.Module):
    def __init__(self, query_dim, heads=2, dim_head=4):
        super().__init__()
        inner_dim = dim_head * heads
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_k = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_v = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(inner_dim, query_dim)])

    def forward(self, hidden_states, context=None, mask=None):
        query = self.to_q(hidden_states)
        context = context if context is not None else hidden_states
        key = self.to_k(context)
        value = self.to_v(context)
        attn = torch.softmax(query @ key.transpose(-1, -2) * self.scale, dim=-1)
        hidden_states = attn @ value
        hidden_states = self.to_out[0](hidden_states)
        return hidden_states


class LLLiteModule(torch.nn.Module):
    def __init__(self, depth, cond_emb_dim, name, org_module, mlp_dim, dropout=None):
        super().__init__()
        self.lllite_name = name
        self.cond_emb_dim = cond_emb_dim
        self.org_module = [org_module]
        self.dropout = dropout
        in_dim = org_module.in_features
        self.conditioning1 = torch.nn.Sequential(
            torch.nn.Conv2d(3, cond_emb_dim // 2, kernel_size=4, stride=4, padding=0),
            torch.nn.ReLU(inplace=True),
            torch.nn.Conv2d(cond_emb_dim // 2, cond_emb_dim, kernel_size=2, stride=2, padding=0),
        )
        self.down = torch.nn.Sequential(torch.nn.Linear(in_dim, mlp_dim), torch.nn.ReLU(inplace=True))
        self.mid = torch.nn.Sequential(torch.nn.Linear(mlp_dim + cond_emb_dim, mlp_dim), torch.nn.ReLU(inplace=True))
        self.up = torch.nn.Sequential(torch.nn.Linear(mlp_dim, in_dim))
        self.cond_emb = None
        self.batch_cond_only = False

    def set_cond_image(self, cond_image):
        cx = self.conditioning1(cond_image)
        n, c, h, w = cx.shape
        cx = cx.view(n, c, h * w).permute(0, 2, 1)
        self.cond_emb = cx

    def apply_to(self):
        self.org_forward = self.org_module[0].forward
        self.org_module[0].forward = self.forward

    def forward(self, x):
        cx = self.cond_emb
        cx = torch.cat([cx, self.down(x)], dim=2)
        cx = self.mid(cx)
        cx = self.up(cx)

        # add residual
        if self.batch_cond_only:
            x[1::2] += cx  # <-- IPL004
        else:
            x += cx  # <-- IPL004

        x = self.org_forward(x)  # call the original module here
        return x


def main():
    attn1 = CrossAttention(query_dim=8)
    for p in attn1.parameters():
        p.requires_grad_(False)
    lllite_modules = []
    for name in ["to_q", "to_k", "to_v"]:
        module = LLLiteModule(1, 8, "lllite_unet_attn1_" + name, getattr(attn1, name), mlp_dim=4)
        torch.nn.init.normal_(module.up[0].weight, std=0.5)
        module.apply_to()
        lllite_modules.append(module)

    cond_image = torch.rand(2, 3, 16, 16)
    for module in lllite_modules:
        module.set_cond_image(cond_image)

    hidden_states = torch.randn(2, 4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = attn1(hidden_states)
    loss = out.float().pow(2).mean()
    loss.backward()
    grads = [m.up[0].weight.grad for m in lllite_modules]
    return out.float().detach(), grads[0], grads[1], grads[2]


out, grad_q, grad_k, grad_v = main()
