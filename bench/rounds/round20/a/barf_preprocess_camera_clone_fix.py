# label: safe
# why: the fixed preprocess_camera clones intr/pose before the in-place crop/resize edits, so the cached self.cameras[idx] keeps its original focal length on every pass.
# source: https://github.com/chenhsuanlin/bundle-adjusting-NeRF/blob/803291bd0ee91c7c13fb5cc42195383c5ade7d15/data/base.py (fix of issue #13)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Opt:
    H, W = 4, 4
    preload = True


def to_hom(X):
    return torch.cat([X, torch.ones_like(X[..., :1])], dim=-1)


def img2cam(X, cam_intr):
    return X @ cam_intr.inverse().transpose(-1, -2)


def get_center_and_ray(opt, pose, intr):
    with torch.no_grad():
        y_range = torch.arange(opt.H, dtype=torch.float32).add_(0.5)
        x_range = torch.arange(opt.W, dtype=torch.float32).add_(0.5)
        Y, X = torch.meshgrid(y_range, x_range, indexing="ij")
        xy_grid = torch.stack([X, Y], dim=-1).view(-1, 2)
    grid_3D = img2cam(to_hom(xy_grid), intr)
    ray = grid_3D @ pose[:, :3].transpose(0, 1)
    center = pose[:, 3].expand_as(ray)
    return center, ray


class Dataset:
    def __init__(self, opt):
        self.raw_H, self.raw_W = 8, 8
        self.crop_H, self.crop_W = 6, 6
        self.focal = 10.0
        self.list = [0, 1]
        if opt.preload:
            self.cameras = [self.get_camera(opt, idx) for idx in range(len(self.list))]

    def get_camera(self, opt, idx):
        intr = torch.tensor([[self.focal, 0, self.raw_W / 2],
                             [0, self.focal, self.raw_H / 2],
                             [0, 0, 1]]).float()
        pose = torch.eye(3, 4)
        pose[2, 3] = float(idx)
        return intr, pose

    def preprocess_camera(self, opt, intr, pose, aug=None):
        intr, pose = intr.clone(), pose.clone()
        # center crop
        intr[0, 2] -= (self.raw_W - self.crop_W) / 2
        intr[1, 2] -= (self.raw_H - self.crop_H) / 2
        # resize
        intr[0] *= opt.W / self.crop_W
        intr[1] *= opt.H / self.crop_H
        return intr, pose

    def __getitem__(self, idx):
        opt = Opt
        intr, pose = self.cameras[idx] if opt.preload else self.get_camera(opt, idx)
        intr, pose = self.preprocess_camera(opt, intr, pose)
        return dict(idx=idx, intr=intr, pose=pose)


def main():
    opt = Opt
    data = Dataset(opt)
    nerf = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    for epoch in range(3):
        total = 0.0
        for idx in range(len(data.list)):
            var = data[idx]
            center, ray = get_center_and_ray(opt, var["pose"], var["intr"])
            rgb = nerf(torch.cat([center, ray], dim=-1))
            loss = rgb.pow(2).mean()
            loss.backward()
            total += loss.item()
    return rgb.detach(), nerf[0].weight.grad


rgb, grad = main()
