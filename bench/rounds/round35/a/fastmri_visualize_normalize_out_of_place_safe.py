# label: safe
# why: After the commit, _visualize normalises with `image = image - image.min()`, so the images prepared for TensorBoard are fresh tensors and _evaluate still sees the logged reconstructions and targets unchanged.
# source: https://github.com/facebookresearch/fastMRI/commit/b04848355e54f6ee2d0af88e4ebc63f573b53b9e
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


def nmse(gt, pred):
    """Normalized Mean Squared Error."""
    return torch.linalg.norm(gt - pred) ** 2 / torch.linalg.norm(gt) ** 2


def psnr(gt, pred):
    """Peak Signal to Noise Ratio."""
    mse = torch.mean((gt - pred) ** 2)
    return 10 * torch.log10(gt.max() ** 2 / mse)


class Unet(nn.Module):
    def __init__(self, in_chans=1, out_chans=1, chans=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(in_chans, chans, 3, padding=1), nn.InstanceNorm2d(chans), nn.LeakyReLU(0.2))
        self.up = nn.Conv2d(chans, out_chans, 1)

    def forward(self, image):
        return self.up(self.down(image.unsqueeze(1))).squeeze(1)


class MriModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = Unet()
        self.logged_images = {}

    def forward(self, input):
        return self.unet(input)

    def validation_step(self, batch, batch_idx):
        input, target, mean, std, fname, slice = batch
        output = self.forward(input)
        mean = mean.unsqueeze(1).unsqueeze(2)
        std = std.unsqueeze(1).unsqueeze(2)
        return {
            "fname": fname,
            "slice": slice,
            "output": (output * std + mean).detach().cpu(),
            "target": (target * std + mean).cpu(),
            "val_loss": F.l1_loss(output, target),
        }

    def _evaluate(self, val_logs):
        losses = []
        outputs = defaultdict(list)
        targets = defaultdict(list)

        for log in val_logs:
            losses.append(log["val_loss"].detach().cpu())
            for i, (fname, slice_ind) in enumerate(zip(log["fname"], log["slice"])):
                outputs[fname].append((slice_ind, log["output"][i]))
                targets[fname].append((slice_ind, log["target"][i]))

        metrics = dict(val_loss=losses, nmse=[], psnr=[])
        for fname in outputs:
            output = torch.stack([out for _, out in sorted(outputs[fname], key=lambda t: t[0])])
            target = torch.stack([tgt for _, tgt in sorted(targets[fname], key=lambda t: t[0])])
            metrics["nmse"].append(nmse(target, output))
            metrics["psnr"].append(psnr(target, output))

        metrics = {metric: torch.stack(values).mean() for metric, values in metrics.items()}
        return dict(log=metrics, **metrics)

    def _visualize(self, val_logs):
        def _normalize(image):
            image = image[None]
            image = image - image.min()
            return image / image.max()

        def _save_image(image, tag):
            grid = torch.cat(list(image), dim=-1)
            self.logged_images[tag] = grid

        # only process first size to simplify visualization.
        visualize_size = val_logs[0]["output"].shape
        val_logs = [x for x in val_logs if x["output"].shape == visualize_size]
        num_logs = len(val_logs)
        num_viz_images = 16
        step = (num_logs + num_viz_images - 1) // num_viz_images
        outputs, targets = [], []
        for i in range(0, num_logs, step):
            outputs.append(_normalize(val_logs[i]["output"][0]))
            targets.append(_normalize(val_logs[i]["target"][0]))
        outputs = torch.stack(outputs)
        targets = torch.stack(targets)
        _save_image(targets, "Target")
        _save_image(outputs, "Reconstruction")
        _save_image(torch.abs(targets - outputs), "Error")

    def validation_epoch_end(self, val_logs):
        self._visualize(val_logs)
        return self._evaluate(val_logs)


def main():
    torch.manual_seed(0)
    module = MriModule()
    val_logs = []
    for batch_idx in range(3):
        input = torch.randn(2, 16, 16)
        target = torch.randn(2, 16, 16)
        mean = torch.rand(2) + 0.5
        std = torch.rand(2) + 0.5
        fname = [f"file{batch_idx}.h5", f"file{batch_idx}.h5"]
        slice = [0, 1]
        val_logs.append(module.validation_step((input, target, mean, std, fname, slice), batch_idx))
    result = module.validation_epoch_end(val_logs)
    return result["nmse"], result["psnr"], result["val_loss"], module.logged_images["Reconstruction"]


val_nmse, val_psnr, val_loss, reconstruction_grid = main()
print(float(val_nmse), float(val_psnr))
