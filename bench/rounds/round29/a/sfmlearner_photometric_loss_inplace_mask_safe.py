# label: safe
# why: diff is a fresh product and X_norm/Y_norm are fresh arithmetic results that no backward node saved, so `diff *= explainability_mask` and the masked `*= 2` in cam2pixel keep correct gradients for depth, pose and the explainability mask.
# source: https://github.com/ClementPinard/SfmLearner-Pytorch/commit/9ea83b39aaaa2d6582f4178a905623321caf7fb3 (pre-fix loss_functions.py / inverse_warp.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pixel2cam(depth, intrinsics_inv):
    b, h, w = depth.size()
    i_range = torch.arange(0, h).view(1, h, 1).expand(1, h, w).type_as(depth)
    j_range = torch.arange(0, w).view(1, 1, w).expand(1, h, w).type_as(depth)
    ones = torch.ones(1, h, w).type_as(depth)
    pixel_coords = torch.stack((j_range, i_range, ones), dim=1)
    current_pixel_coords = pixel_coords[:, :, :h, :w].expand(b, 3, h, w).contiguous().view(b, 3, -1)
    cam_coords = intrinsics_inv.bmm(current_pixel_coords).view(b, 3, h, w)
    return cam_coords * depth.unsqueeze(1)


def cam2pixel(cam_coords, proj_c2p):
    b, _, h, w = cam_coords.size()
    cam_coords_flat = cam_coords.view(b, 3, -1)
    pcoords = proj_c2p[:, :, :3].bmm(cam_coords_flat) + proj_c2p[:, :, 3:]
    X = pcoords[:, 0]
    Y = pcoords[:, 1]
    Z = pcoords[:, 2].clamp(min=1e-3)
    X_norm = 2 * (X / Z) / (w - 1) - 1
    X_norm[(X_norm > 1) + (X_norm < -1)] *= 2
    Y_norm = 2 * (Y / Z) / (h - 1) - 1
    Y_norm[(Y_norm > 1) + (Y_norm < -1)] *= 2
    pixel_coords = torch.stack([X_norm, Y_norm], dim=2)
    return pixel_coords.view(b, h, w, 2)


def pose_vec2mat(vec):
    translation = vec[:, :3].unsqueeze(-1)
    rz = vec[:, 5]
    cosz, sinz = torch.cos(rz), torch.sin(rz)
    zeros = rz.detach() * 0
    ones = zeros.detach() + 1
    rot_mat = torch.stack([cosz, -sinz, zeros, sinz, cosz, zeros, zeros, zeros, ones], dim=1).view(-1, 3, 3)
    return torch.cat([rot_mat, translation], dim=2)


def inverse_warp(img, depth, pose, intrinsics, intrinsics_inv):
    cam_coords = pixel2cam(depth, intrinsics_inv)
    pose_mat = pose_vec2mat(pose)
    proj_cam_to_src_pixel = intrinsics.bmm(pose_mat)
    src_pixel_coords = cam2pixel(cam_coords, proj_cam_to_src_pixel)
    return F.grid_sample(img, src_pixel_coords, padding_mode='zeros', align_corners=False)


def photometric_reconstruction_loss(tgt_img, ref_imgs, intrinsics, intrinsics_inv, depth, explainability_mask, pose):
    reconstruction_loss = 0
    for i, ref_img in enumerate(ref_imgs):
        current_pose = pose[:, i]
        ref_img_warped = inverse_warp(ref_img, depth[:, 0], current_pose, intrinsics, intrinsics_inv)
        out_of_bound = 1 - (ref_img_warped == 0).prod(1, keepdim=True).type_as(ref_img_warped)
        diff = (tgt_img - ref_img_warped) * out_of_bound

        if explainability_mask is not None:
            diff *= explainability_mask[:, i:i + 1].expand_as(diff)

        reconstruction_loss += diff.abs().mean()
    return reconstruction_loss


def main():
    disp_net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1), nn.Softplus())
    pose_exp_net = nn.Conv2d(9, 2 + 2 * 6, 3, padding=1)
    tgt_img = torch.rand(2, 3, 8, 10)
    ref_imgs = [torch.rand(2, 3, 8, 10), torch.rand(2, 3, 8, 10)]
    intrinsics = torch.tensor([[8.0, 0, 5.0], [0, 8.0, 4.0], [0, 0, 1.0]]).expand(2, 3, 3).contiguous()
    intrinsics_inv = torch.inverse(intrinsics)
    depth = 1.0 + disp_net(tgt_img)
    out = pose_exp_net(torch.cat([tgt_img] + ref_imgs, dim=1))
    explainability_mask = torch.sigmoid(out[:, :2])
    pose = 0.01 * out[:, 2:].mean(dim=(2, 3)).view(2, 2, 6)
    loss = photometric_reconstruction_loss(tgt_img, ref_imgs, intrinsics, intrinsics_inv, depth, explainability_mask, pose)
    loss.backward()
    return loss.detach(), disp_net[0].weight.grad.clone(), pose_exp_net.weight.grad.clone()


loss, g_disp, g_pose = main()
