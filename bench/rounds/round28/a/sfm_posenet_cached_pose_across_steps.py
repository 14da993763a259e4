# label: hazard raises no-twin
# why: the added consistency loss reuses the pose predicted in the previous iteration without detaching it, so backward walks into the old graph, whose saved pose_pred weight was already updated in place by optimizer.step().
# source: https://github.com/JiawangBian/SC-SfMLearner-Release/issues/57
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PoseNet(nn.Module):
    def __init__(self, nb_ref_imgs=1):
        super().__init__()
        self.nb_ref_imgs = nb_ref_imgs
        self.encoder = nn.Sequential(
            nn.Conv2d(6, 16, 3, stride=2, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(inplace=True),
        )
        self.pose_pred = nn.Conv2d(32, 6 * self.nb_ref_imgs, kernel_size=1, padding=0)

    def forward(self, tgt_img, ref_img):
        x = self.encoder(torch.cat([tgt_img, ref_img], 1))
        pose = self.pose_pred(x).mean(3).mean(2)
        return 0.01 * pose.view(pose.size(0), 6)


class DispNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, img):
        return 1.0 / (10 * torch.sigmoid(self.net(img)) + 0.01)


def compute_pose_with_inv(pose_net, tgt_img, ref_imgs):
    poses = [pose_net(tgt_img, ref_img) for ref_img in ref_imgs]
    poses_inv = [pose_net(ref_img, tgt_img) for ref_img in ref_imgs]
    return poses, poses_inv


def compute_smooth_loss(tgt_depth, tgt_img):
    grad_disp_x = torch.abs(tgt_depth[:, :, :, :-1] - tgt_depth[:, :, :, 1:])
    grad_img_x = torch.mean(torch.abs(tgt_img[:, :, :, :-1] - tgt_img[:, :, :, 1:]), 1, keepdim=True)
    return (grad_disp_x * torch.exp(-grad_img_x)).mean()


def compute_photo_loss(tgt_img, ref_imgs, tgt_depth, poses, poses_inv):
    loss = 0
    for ref_img, pose, pose_inv in zip(ref_imgs, poses, poses_inv):
        shift = pose[:, :3].mean(1).view(-1, 1, 1, 1)
        loss = loss + (tgt_img - ref_img * (1 + shift) * tgt_depth.mean()).abs().mean()
        loss = loss + (pose + pose_inv).abs().mean()
    return loss


def train(disp_net, pose_net, optimizer, batches):
    prev_poses = None
    for i, (tgt_img, ref_imgs) in enumerate(batches):
        tgt_depth = disp_net(tgt_img)
        poses, poses_inv = compute_pose_with_inv(pose_net, tgt_img, ref_imgs)

        loss_1 = compute_photo_loss(tgt_img, ref_imgs, tgt_depth, poses, poses_inv)
        loss_2 = compute_smooth_loss(tgt_depth, tgt_img)
        loss = loss_1 + 0.1 * loss_2
        if prev_poses is not None:
            # additional loss: temporal consistency of consecutive pose predictions
            loss = loss + 0.5 * sum((p - q).abs().mean() for p, q in zip(poses, prev_poses))

        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()  # <-- IPL001
        prev_poses = poses
    return loss.item()


def main():
    disp_net, pose_net = DispNet(), PoseNet()
    optimizer = torch.optim.Adam(list(disp_net.parameters()) + list(pose_net.parameters()), lr=1e-3)
    batches = [(torch.rand(2, 3, 16, 16), [torch.rand(2, 3, 16, 16)]) for _ in range(3)]
    train(disp_net, pose_net, optimizer, batches)
    return pose_net.pose_pred.weight.detach().clone()


pose_pred_weight = main()
