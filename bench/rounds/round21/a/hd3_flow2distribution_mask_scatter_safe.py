# label: safe
# why: HD3's _flow2distribution multiplies the bilinear corner weights by their validity masks in place (wt_tl *= mask_tl) and scatter_adds them into a fresh zeros buffer; the products that made wt_* saved their factors, not their outputs, so the in-place writes never touch a saved tensor.
# source: https://github.com/ucbdrive/hd3/blob/45522e760d09628de85da866d839f779bc34bc22/models/hd3_ops.py
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def _flow2distribution(flo, c):
    # flo: [B,2,H,W]
    # return [B,d*d,H,W], d=2c+1
    B, _, H, W = flo.size()
    flo = torch.clamp(flo, min=-c, max=c)
    x = flo[:, 0, :, :]
    y = flo[:, 1, :, :]
    x0 = torch.floor(x)
    x1 = x0 + 1
    y0 = torch.floor(y)
    y1 = y0 + 1

    x0_safe = torch.clamp(x0, min=-c, max=c)
    y0_safe = torch.clamp(y0, min=-c, max=c)
    x1_safe = torch.clamp(x1, min=-c, max=c)
    y1_safe = torch.clamp(y1, min=-c, max=c)

    wt_x0 = (x1 - x) * torch.eq(x0, x0_safe).float()
    wt_x1 = (x - x0) * torch.eq(x1, x1_safe).float()
    wt_y0 = (y1 - y) * torch.eq(y0, y0_safe).float()
    wt_y1 = (y - y0) * torch.eq(y1, y1_safe).float()

    wt_tl = wt_x0 * wt_y0
    wt_tr = wt_x1 * wt_y0
    wt_bl = wt_x0 * wt_y1
    wt_br = wt_x1 * wt_y1

    mask_tl = torch.eq(x0, x0_safe).float() * torch.eq(y0, y0_safe).float()
    mask_tr = torch.eq(x1, x1_safe).float() * torch.eq(y0, y0_safe).float()
    mask_bl = torch.eq(x0, x0_safe).float() * torch.eq(y1, y1_safe).float()
    mask_br = torch.eq(x1, x1_safe).float() * torch.eq(y1, y1_safe).float()

    wt_tl *= mask_tl
    wt_tr *= mask_tr
    wt_bl *= mask_bl
    wt_br *= mask_br

    out = torch.zeros((B, (2 * c + 1)**2, H, W), device=flo.device)
    label_tl = (y0_safe + c) * (2 * c + 1) + x0_safe + c
    label_tr = (y0_safe + c) * (2 * c + 1) + x1_safe + c
    label_bl = (y1_safe + c) * (2 * c + 1) + x0_safe + c
    label_br = (y1_safe + c) * (2 * c + 1) + x1_safe + c

    out.scatter_add_(1, label_tl.unsqueeze(1).long(), wt_tl.unsqueeze(1))
    out.scatter_add_(1, label_tr.unsqueeze(1).long(), wt_tr.unsqueeze(1))
    out.scatter_add_(1, label_bl.unsqueeze(1).long(), wt_bl.unsqueeze(1))
    out.scatter_add_(1, label_br.unsqueeze(1).long(), wt_br.unsqueeze(1))

    return out


def vector2density(vect, c, dim):
    assert vect.size(1) == dim
    return _flow2distribution(vect, c)


def main():
    c = 2
    flow_head = torch.nn.Conv2d(8, 2, 3, padding=1)
    feat = torch.randn(2, 8, 6, 6)
    flow = flow_head(feat) * 3.0
    gt_flow = torch.randn(2, 2, 6, 6) * 1.5
    prob = vector2density(flow, c, dim=2)
    gt_prob = vector2density(gt_flow, c, dim=2)
    loss = F.l1_loss(prob, gt_prob)
    loss.backward()
    return prob.detach(), flow_head.weight.grad


density, head_grad = main()
