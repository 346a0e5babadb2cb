#include "experiments/architectures/pre_post_norm_claims.h"

#include "experiments/kit/kit.h"

#include "nn/transformer/decoder_only.h"

namespace attn::experiments::pre_post {

namespace {

// Sum of failures and of runs over the cells matching a filter.
template <class F>
double rate(const std::vector<Cell>& cells, F&& keep) {
  double failed = 0, total = 0;
  for (const auto& c : cells)
    if (keep(c)) failed += static_cast<double>(c.failures()), total += c.runs.size();
  return total > 0 ? failed / total : 0;
}

// The lowest mean final loss of one norm placement over its schedules and learning rates.
double best_loss(const std::vector<Cell>& cells, bool pre, int64_t depth) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& c : cells)
    if (c.pre == pre && c.depth == depth && c.failures() == 0) best = std::min(best, c.mean_loss());
  return best;
}

// The failure rates over both depths (results.json), their three claims and the note.
void failure_claims(const Config& cfg,
                    RunContext& ctx,
                    const std::vector<Cell>& cells,
                    DocumentComparison& cmp) {
  const double top_lr = kit::max_of(cfg.get_reals("lrs"));
  auto at_top = [&](bool pre, bool warm) {
    return rate(cells,
                [&](const Cell& c) { return c.pre == pre && c.warm == warm && c.lr == top_lr; });
  };
  const double post_cold_top = at_top(false, false), pre_cold_top = at_top(true, false);
  const double post_warm_top = at_top(false, true), pre_warm_top = at_top(true, true);
  const double pre_cold_all = rate(cells, [](const Cell& c) { return c.pre && !c.warm; });
  const double post_cold_all = rate(cells, [](const Cell& c) { return !c.pre && !c.warm; });
  ctx.result("top_lr", top_lr);
  ctx.result("failure_rate_top_lr_post_no_warmup", post_cold_top);
  ctx.result("failure_rate_top_lr_pre_no_warmup", pre_cold_top);
  ctx.result("failure_rate_top_lr_post_warmup", post_warm_top);
  ctx.result("failure_rate_top_lr_pre_warmup", pre_warm_top);
  ctx.result("failure_rate_pre_no_warmup", pre_cold_all);
  ctx.result("failure_rate_post_no_warmup", post_cold_all);
  cmp.add_exact("pre-norm trains stably without warm-up (001)", "yes",
                kit::yes_no(pre_cold_all == 0),
                fmt::format("pre-norm without warm-up failed {:.0f}% of its runs over every "
                            "learning rate and depth",
                            100 * pre_cold_all));
  cmp.add_exact("post-norm without warm-up fails more often than pre-norm at a high learning rate",
                "yes", kit::yes_no(post_cold_top > pre_cold_top),
                fmt::format("at lr {:g}: post-norm {:.0f}% of runs failed, pre-norm {:.0f}%",
                            top_lr, 100 * post_cold_top, 100 * pre_cold_top));
  std::string per_depth;
  for (int64_t depth : cfg.get_ints("depths")) {
    auto cell_rate = [&](bool warm) {
      return rate(cells, [&](const Cell& c) {
        return !c.pre && c.warm == warm && c.lr == top_lr && c.depth == depth;
      });
    };
    per_depth +=
        fmt::format("{}{} blocks: {:.0f}% with, {:.0f}% without", per_depth.empty() ? "" : "; ",
                    depth, 100 * cell_rate(true), 100 * cell_rate(false));
  }
  cmp.add_exact(
      "warm-up rescues post-norm at that learning rate", "yes",
      kit::yes_no(post_warm_top < post_cold_top),
      fmt::format("post-norm at lr {:g}: {:.0f}% failed with warm-up, {:.0f}% without ({})", top_lr,
                  100 * post_warm_top, 100 * post_cold_top, per_depth));
  ctx.note(fmt::format(
      "At the top learning rate {:g} without warm-up, {:.0f}% of post-norm runs and {:.0f}% of "
      "pre-norm runs failed; with warm-up, {:.0f}% and {:.0f}%. Post-norm at that rate, by "
      "depth: {}. Over every rate and depth pre-norm without warm-up failed "
      "{:.0f}% of its runs, post-norm {:.0f}%.",
      top_lr, 100 * post_cold_top, 100 * pre_cold_top, 100 * post_warm_top, 100 * pre_warm_top,
      per_depth, 100 * pre_cold_all, 100 * post_cold_all));
}

// The deepest stack: its gradient pattern at initialisation and the best tuned losses
// (results.json), and their three claims.
void deepest_claims(const Config& cfg,
                    RunContext& ctx,
                    const std::vector<Cell>& cells,
                    const std::vector<InitGradients>& grads,
                    DocumentComparison& cmp) {
  const int64_t deepest =
      *std::max_element(cfg.get_ints("depths").begin(), cfg.get_ints("depths").end());
  double post_ratio = 0, pre_ratio = 0, post_spread = 0, pre_spread = 0;
  for (const auto& g : grads)
    if (g.depth == deepest) {
      (g.pre ? pre_ratio : post_ratio) = g.last_over_first();
      (g.pre ? pre_spread : post_spread) = g.spread();
    }
  ctx.result("init_grad_last_over_first_post", post_ratio);
  ctx.result("init_grad_last_over_first_pre", pre_ratio);
  ctx.result("init_grad_spread_post", post_spread);
  ctx.result("init_grad_spread_pre", pre_spread);
  const double best_post = best_loss(cells, false, deepest),
               best_pre = best_loss(cells, true, deepest);
  ctx.result("best_loss_post", finite_or_null(best_post));
  ctx.result("best_loss_pre", finite_or_null(best_pre));
  cmp.add_exact(
      "post-norm's gradients at initialisation are badly scaled across blocks; pre-norm's are "
      "more even",
      "yes", kit::yes_no(post_spread > 2 * pre_spread),
      fmt::format("{} blocks, largest / smallest block gradient norm: post-norm {:.1f}, pre-norm "
                  "{:.1f} ('badly scaled' = more than twice pre-norm's spread)",
                  deepest, post_spread, pre_spread));
  cmp.add_exact(
      "post-norm's largest gradients are at the last blocks (Xiong et al. 2020; the pattern the "
      "warm-up argument rests on)",
      "yes", kit::yes_no(post_ratio > 1),
      fmt::format("{} blocks, last / first block gradient norm: post-norm {:.2f}, pre-norm {:.2f}. "
                  "Our GPT starts its embeddings at N(0, {:g}): the first post-norm block's norm "
                  "divides a sum of that small size by its standard deviation, which multiplies "
                  "the gradient reaching that block; Xiong et al. analyse inputs of unit size",
                  deepest, post_ratio, pre_ratio, nn::DecoderOnlyOptions().init_std));
  cmp.add_exact(
      "post-norm can end slightly better than pre-norm when tuned (001)", "yes",
      kit::yes_no(best_post < best_pre),
      fmt::format("{} blocks, best mean held-out loss over schedules and learning rates without "
                  "a failed seed: post-norm {:.3f}, pre-norm {:.3f}",
                  deepest, best_post, best_pre));
}

}  // namespace

void judge(const Config& cfg,
           RunContext& ctx,
           const std::vector<Cell>& cells,
           const std::vector<InitGradients>& grads) {
  DocumentComparison cmp(fmt::format(
      "001 (pre-norm versus post-norm), 000 Algorithm 3 vs ours: depths {}, learning rates up "
      "to {:g}, {} seeds, {} steps",
      fmt::join(cfg.get_ints("depths"), " and "), kit::max_of(cfg.get_reals("lrs")),
      cfg.get_int("seeds"), cfg.get_int("steps")));
  failure_claims(cfg, ctx, cells, cmp);
  deepest_claims(cfg, ctx, cells, grads, cmp);
  ctx.compare(cmp);
}

}  // namespace attn::experiments::pre_post
