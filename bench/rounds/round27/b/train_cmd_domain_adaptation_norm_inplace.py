# label: hazard raises
# why: the central moment discrepancy starts from the norm of the mean difference and then accumulates the higher-moment norms with +=, but torch.norm saved its own output for backward, so the in-place accumulation breaks cmd.backward().
# source: https://github.com/pytorch/pytorch/issues/78140
import torch
import torch.nn as nn

torch.manual_seed(0)


class FeatureExtractor(nn.Module):
    def __init__(self, in_dim=12, hid_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hid_dim), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


def central_moment_discrepancy(x, y, n_moments=3):
    mean_x = x.mean(dim=0, keepdim=True)
    mean_y = y.mean(dim=0, keepdim=True)

    offsets_x = x - mean_x
    offsets_y = y - mean_y

    cmd = (mean_x - mean_y).squeeze().norm(p=2)
    for k in range(2, n_moments + 1):
        central_moment_x = offsets_x.pow(k).mean(dim=0)
        central_moment_y = offsets_y.pow(k).mean(dim=0)
        cmd += (central_moment_x - central_moment_y).norm(p=2)  # <-- IPL001
    return cmd


def main():
    extractor = FeatureExtractor()
    classifier = nn.Linear(16, 3)
    source_x, source_y = torch.randn(32, 12), torch.randint(0, 3, (32,))
    target_x = torch.randn(32, 12) + 0.5

    source_feat = extractor(source_x)
    target_feat = extractor(target_x)
    cls_loss = nn.functional.cross_entropy(classifier(source_feat), source_y)
    cmd = central_moment_discrepancy(source_feat, target_feat)
    loss = cls_loss + 0.5 * cmd
    loss.backward()
    return loss.detach(), extractor.net[0].weight.grad


loss, extractor_grad = main()
