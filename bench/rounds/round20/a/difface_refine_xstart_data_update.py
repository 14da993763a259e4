# label: safe no-twin
# why: _refine_xstart makes a fresh leaf x0_current, takes autograd.grad of the masking regularizer, then moves the leaf with x0_current.data = x0_update.data; the .data write happens after the gradient was computed and before the next forward, so no graph ever sees a stale value.
# source: https://github.com/zsyOAOA/DifFace/blob/5c9ab801b2872544b221d4bfdeead7d430af4ed2/models/gaussian_diffusion.py (PR #21 "enable autograd" adds @torch.enable_grad() to masking_regularizer)
import torch
import torch as th
import torch.nn.functional as F

torch.manual_seed(0)


@torch.enable_grad()
def masking_regularizer(y0, x0, cond_kwargs):
    mask = cond_kwargs['mask']
    if 'vqgan' in cond_kwargs:
        pred = cond_kwargs['vqgan'].decode(x0)
    else:
        pred = x0
    loss = (F.mse_loss(pred, y0, reduction='none') * (1 - mask)).sum()
    return loss


class GaussianDiffusion:
    def _refine_xstart(self, x_start, y0, gamma, num_update=1, regularizer=None, cond_kwargs=None):
        original_dtype = x_start.dtype
        x0_current = th.empty_like(x_start, dtype=th.float32).copy_(x_start)
        x0_current.requires_grad_(True)
        for _ in range(num_update):
            if cond_kwargs is None:
                loss = regularizer(y0, x0_current)
            else:
                loss = regularizer(y0, x0_current, cond_kwargs)
            grad = th.autograd.grad(
                outputs=loss,
                inputs=x0_current,
                grad_outputs=None,
            )[0]
            assert grad.shape == x0_current.shape
            x0_update = x0_current.detach() - gamma * grad
            x0_current.data = x0_update.data

        return x0_update.type(original_dtype)

    def p_mean_variance(self, model, x, t, y0, gamma, num_update, regularizer, cond_kwargs):
        model_output = model(x)
        pred_xstart = model_output.clamp(-1, 1)
        if gamma > 0:
            pred_xstart = self._refine_xstart(
                pred_xstart, y0=y0, gamma=gamma, num_update=num_update,
                regularizer=regularizer, cond_kwargs=cond_kwargs)
            pred_xstart = pred_xstart.clamp(-1, 1)
        model_mean = 0.5 * (pred_xstart + x)
        return {"mean": model_mean, "pred_xstart": pred_xstart}


def main():
    diffusion = GaussianDiffusion()
    model = torch.nn.Conv2d(3, 3, 3, padding=1)
    y0 = torch.rand(1, 3, 8, 8) * 2 - 1
    mask = torch.zeros(1, 1, 8, 8)
    mask[..., 2:6, 2:6] = 1
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        for t in range(3):
            out = diffusion.p_mean_variance(model, x, t, y0, gamma=0.1, num_update=2,
                                            regularizer=masking_regularizer, cond_kwargs={'mask': mask})
            x = out["mean"]
    return x, out["pred_xstart"]


x, pred_xstart = main()
