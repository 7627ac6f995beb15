"""PPO with action masking on Havok & Hijinks, in one file (CleanRL style).

    python examples/ppo_masked.py --dragon fire --opponent heuristic --total-timesteps 200000

The learner plays one seat of ``gymnasium.make("havok_env/HavokHijinks-v0")``; the opponent
(any agent spec) plays every other decision inside the env, crash windows included. Illegal
actions get a logit of -1e8, so they are never sampled and their gradient is zero. At the end it
plays ``--eval-games`` games with the masked argmax of the policy and prints the win rate.
Needs torch (the ``train`` extra). A sketch to start from, not the project's trainer (train.py).
"""

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

import havok_env  # noqa: F401  (registers havok_env/HavokHijinks-v0)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dragon", default="fire")
    p.add_argument("--opponent", default="heuristic", help="agent spec of every opponent")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=200_000)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=128, help="steps per env per rollout")
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--eval-games", type=int, default=200)
    return p.parse_args(argv)


class Agent(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(n_obs, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(),
                                    nn.Linear(256, 1))
        self.actor = nn.Sequential(nn.Linear(n_obs, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(),
                                   nn.Linear(256, n_actions))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, mask, action=None):
        logits = torch.where(mask, self.actor(x), torch.tensor(-1e8))
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def make_envs(args):
    fns = [lambda: gym.make("havok_env/HavokHijinks-v0", dragon=args.dragon, num_players=args.players,
                            opponents=args.opponent) for _ in range(args.num_envs)]
    # same-step autoreset: the observation (and the mask) after a finished game is the next game's
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


def masks_of(envs):
    return torch.tensor(np.stack(envs.call("action_masks")), dtype=torch.bool)


def evaluate(agent, args, games):
    env = gym.make("havok_env/HavokHijinks-v0", dragon=args.dragon, num_players=args.players,
                   opponents=args.opponent)
    wins = 0
    obs, _ = env.reset(seed=args.seed + 10_000)
    for _ in range(games):
        done = False
        while not done:
            mask = torch.tensor(env.unwrapped.action_masks())
            with torch.no_grad():
                logits = agent.actor(torch.tensor(obs))
            action = int(torch.where(mask, logits, torch.tensor(-1e8)).argmax())
            obs, reward, done, _, info = env.step(action)
        wins += info["won"]
        obs, _ = env.reset()
    return wins / games


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: threads only contend with the env
    envs = make_envs(args)
    n_obs, n_actions = envs.single_observation_space.shape[0], envs.single_action_space.n
    agent = Agent(n_obs, n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    T, N = args.num_steps, args.num_envs
    batch_size = T * N
    obs_b = torch.zeros((T, N, n_obs))
    masks_b = torch.zeros((T, N, n_actions), dtype=torch.bool)
    actions_b, logprobs_b, rewards_b, dones_b, values_b = (torch.zeros((T, N)) for _ in range(5))

    next_obs = torch.tensor(envs.reset(seed=args.seed)[0])
    next_mask, next_done = masks_of(envs), torch.zeros(N)
    results, start, step = [], time.time(), 0
    for update in range(max(1, args.total_timesteps // batch_size)):
        for t in range(T):
            step += N
            obs_b[t], masks_b[t], dones_b[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            actions_b[t], logprobs_b[t], values_b[t] = action, logprob, value.flatten()
            obs, reward, term, trunc, info = envs.step(action.numpy())
            rewards_b[t] = torch.tensor(reward, dtype=torch.float32)
            next_obs, next_mask = torch.tensor(obs), masks_of(envs)
            next_done = torch.tensor(np.logical_or(term, trunc), dtype=torch.float32)
            final = info.get("final_info", {})  # the finished games' info (same-step autoreset)
            results += [float(w) for w, d in zip(final.get("won", []), final.get("_won", [])) if d]

        with torch.no_grad():  # generalized advantage estimation
            next_value = agent.get_value(next_obs).flatten()
            advantages, last = torch.zeros_like(rewards_b), 0
            for t in reversed(range(T)):
                nonterminal = 1.0 - (next_done if t == T - 1 else dones_b[t + 1])
                nv = next_value if t == T - 1 else values_b[t + 1]
                delta = rewards_b[t] + args.gamma * nv * nonterminal - values_b[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * nonterminal * last
            returns = advantages + values_b

        b_obs, b_masks = obs_b.reshape(-1, n_obs), masks_b.reshape(-1, n_actions)
        b_actions, b_logprobs = actions_b.reshape(-1), logprobs_b.reshape(-1)
        b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)
        mb = batch_size // args.num_minibatches
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch_size).split(mb):
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[idx], b_masks[idx], b_actions[idx].long())
                ratio = (newlogprob - b_logprobs[idx]).exp()
                adv = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio,
                                    -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_ret[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        recent = results[-200:]
        print(f"update {update + 1}: {step} steps, {step / (time.time() - start):.0f} steps/s, "
              f"games {len(results)}, recent win rate "
              f"{np.mean(recent) if recent else float('nan'):.3f}", flush=True)
    envs.close()
    if args.eval_games:
        print(f"masked argmax vs {args.opponent}: won {evaluate(agent, args, args.eval_games):.3f} "
              f"of {args.eval_games} games")


if __name__ == "__main__":
    main()
