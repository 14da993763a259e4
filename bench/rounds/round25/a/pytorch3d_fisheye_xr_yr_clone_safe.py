# label: safe
# why: the fix makes uv_distorted_est = xr_yr.clone(), so the thin-prism slice writes only touch the estimate and xr_yr / uv_distorted keep the values the Newton update reads.
# source: https://github.com/facebookresearch/pytorch3d/commit/b0515e14615abe6e154f6dcf671ec8e54f29aaf4
import torch

torch.manual_seed(0)


class FishEyeCameras:
    def __init__(self, focal_length, principal_point, radial_params, tangential_params, thin_prism_params,
                 use_radial=True, use_tangential=True, use_thin_prism=True, device="cpu"):
        self.focal = focal_length
        self.principal_point = principal_point
        self.radial_params = radial_params
        self.tangential_params = tangential_params
        self.thin_prism_params = thin_prism_params
        self.use_radial = use_radial
        self.use_tangential = use_tangential
        self.use_thin_prism = use_thin_prism
        self.num_distortion_iters = 5
        self.epsilon = 1e-12
        self.device = device

    def _compute_xr_yr_from_uv_distorted(self, tangential_params, thin_prism_params, uv_distorted: torch.Tensor) -> torch.Tensor:
        """
        Helper function to compute the vector [x_r; y_r] from uvDistorted
        """
        # early exit if we're not using any tangential/ thin prism distortions
        if not self.use_tangential and not self.use_thin_prism:
            return uv_distorted

        xr_yr = uv_distorted
        # do Newton iterations to find xr_yr
        for _ in range(self.num_distortion_iters):
            # compute the estimated uvDistorted
            uv_distorted_est = xr_yr.clone()
            xr_yr_squared_norm = torch.pow(xr_yr, 2).sum(dim=-1, keepdim=True)

            if self.use_tangential:
                temp = 2.0 * torch.sum(xr_yr * tangential_params[..., 0:2], dim=-1, keepdim=True)
                uv_distorted_est = uv_distorted_est + (temp * xr_yr + xr_yr_squared_norm * tangential_params[..., 0:2])

            if self.use_thin_prism:
                radial_powers = torch.cat([xr_yr_squared_norm, xr_yr_squared_norm * xr_yr_squared_norm], dim=-1)
                uv_distorted_est[..., 0] = uv_distorted_est[..., 0] + torch.sum(
                    thin_prism_params[..., 0:2] * radial_powers, dim=-1,
                )
                uv_distorted_est[..., 1] = uv_distorted_est[..., 1] + torch.sum(
                    thin_prism_params[..., 2:4] * radial_powers, dim=-1,
                )

            # compute the derivative of uvDistorted wrt xr_yr
            duv_distorted_dxryr = self._compute_duv_distorted_dxryr(
                tangential_params, thin_prism_params, xr_yr, xr_yr_squared_norm[..., 0]
            )
            correction = torch.linalg.solve(duv_distorted_dxryr, (uv_distorted - uv_distorted_est)[..., None])
            xr_yr = xr_yr + correction[..., 0]
        return xr_yr

    def _compute_duv_distorted_dxryr(self, tangential_params, thin_prism_params, xr_yr, xr_yr_squareNorm) -> torch.Tensor:
        """
        Helper function, computes the Jacobian of uvDistorted wrt the vector [x_r;y_r]
        """
        sh = list(xr_yr.shape[:-1])
        duv_distorted_dxryr = torch.eye(2).repeat(*sh, 1, 1)

        if self.use_thin_prism:
            temp1 = 2.0 * (thin_prism_params[..., 0] + 2.0 * thin_prism_params[..., 1] * xr_yr_squareNorm[...])
            temp2 = 2.0 * (thin_prism_params[..., 2] + 2.0 * thin_prism_params[..., 3] * xr_yr_squareNorm[...])
            duv_distorted_dxryr = duv_distorted_dxryr + torch.stack(
                [torch.stack([xr_yr[..., 0] * temp1, xr_yr[..., 1] * temp1], dim=-1),
                 torch.stack([xr_yr[..., 0] * temp2, xr_yr[..., 1] * temp2], dim=-1)], dim=-2)
        return duv_distorted_dxryr

    def unproject_points(self, xy: torch.Tensor) -> torch.Tensor:
        uv_distorted = (xy - self.principal_point) / self.focal
        xr_yr = self._compute_xr_yr_from_uv_distorted(self.tangential_params, self.thin_prism_params, uv_distorted)
        ones = torch.ones_like(xr_yr[..., :1])
        return torch.cat([xr_yr, ones], dim=-1)


def main():
    cameras = FishEyeCameras(
        focal_length=torch.tensor([[200.0, 200.0]]),
        principal_point=torch.tensor([[64.0, 64.0]]),
        radial_params=torch.zeros(1, 6),
        tangential_params=torch.zeros(1, 2),
        thin_prism_params=torch.tensor([[0.05, 0.02, -0.04, 0.03]]),
        use_radial=False,
        use_tangential=False,
        use_thin_prism=True,
    )
    xy = torch.rand(1, 16, 2) * 128.0
    rays = cameras.unproject_points(xy)
    return rays, xy


rays, xy = main()
