# label: hazard raises
# why: compute_bin_output thresholds the network output in place (output[output > threshold] = 1) while the caller's MSE loss already saved that same `output` for backward, so loss.backward() after the accuracy bookkeeping finds it modified (the later per-subdir loss also reads the binarized values).
# source: https://github.com/xing-lab-pitt/livecellx/commit/594ccd3e4de4c7ebcad4f93fa2d0ac6323df9f7c (compute_bin_output: "avoid inplace operation during training")
import torch
from torch import nn

torch.manual_seed(0)


class CorrectSegNet(nn.Module):
    def __init__(self, class_weights=(1, 1, 1), num_classes=3, loss_type="MSE"):
        super().__init__()
        self.class_weights = list(class_weights)
        self.model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, num_classes, 1)
        )
        self.loss_type = loss_type
        if self.loss_type == "MSE":
            self.loss_func = torch.nn.MSELoss()
            self.threshold = 1  # edt dist
        else:
            raise NotImplementedError("Loss:%s not implemented", loss_type)

    def forward(self, x: torch.Tensor):
        return self.model(x)

    def compute_loss(self, output: torch.tensor, target: torch.tensor):
        assert len(output.shape) == 4
        total_loss = 0
        num_classes = output.shape[1]
        for cat_dim in range(0, num_classes):
            temp_target = target[:, cat_dim, ...]
            temp_output = output[:, cat_dim, ...]
            total_loss += self.loss_func(temp_output, temp_target) * self.class_weights[cat_dim]
        return total_loss

    def compute_bin_output(self, output):
        if self.loss_type == "MSE":
            output[output > self.threshold] = 1  # <-- IPL004, IPL001
            output[output <= self.threshold] = 0  # <-- IPL004, IPL001
            return output

    def training_step(self, batch, batch_subdirs, subdir_set):
        x, y = batch["input"], batch["gt_mask"]
        output = self(x)
        loss = self.compute_loss(output, y)

        # monitor more stats during training
        bin_output = self.compute_bin_output(output)
        acc = (bin_output.long() == y.long()).float().mean()
        logs = {"train_acc": acc}
        for subdir in subdir_set:
            if not (subdir in batch_subdirs):
                continue
            subdir_indexer = torch.tensor([s == subdir for s in batch_subdirs])
            batched_loss = self.compute_loss(output[subdir_indexer], y[subdir_indexer])
            logs[f"train_loss_{subdir}"] = batched_loss.detach()
        return loss, logs


def main():
    net = CorrectSegNet()
    batch = {"input": torch.randn(4, 3, 8, 8), "gt_mask": torch.rand(4, 3, 8, 8) * 2}
    batch_subdirs = ["a", "b", "a", "b"]
    loss, logs = net.training_step(batch, batch_subdirs, subdir_set=["a", "b"])
    loss.backward()
    return loss.detach(), net.model[0].weight.grad


loss, conv_grad = main()
